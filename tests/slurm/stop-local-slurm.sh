#!/usr/bin/env bash
# Stops what start-local-slurm.sh started in STATE_DIR (only those processes,
# found by their pid files), after cancelling the jobs of that cluster.
# Safe to run twice.
# Usage: stop-local-slurm.sh STATE_DIR
set -uo pipefail
dir=${1:?usage: stop-local-slurm.sh STATE_DIR}
stop() {
  local pidfile=$1 name=$2
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile" 2>/dev/null) || return 0
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  # A stale pid file may name a pid reused by something else: leave that alone.
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 0
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
}
# Jobs first, while slurmctld can still cancel them.
if [ -f "$dir/slurm.conf" ] && command -v scancel >/dev/null; then
  SLURM_CONF="$dir/slurm.conf" timeout 10 scancel --full --quiet -u "$(id -un)" 2>/dev/null || true
fi
stop "$dir/slurmd.pid" slurmd
stop "$dir/slurmctld.pid" slurmctld
stop "$dir/munge/munged.pid" munged
touch "$dir/stopped" 2>/dev/null
exit 0
