#!/usr/bin/env bash
# Starts a throwaway single-node Slurm cluster (munged, slurmctld, slurmd on
# localhost) with every file under STATE_DIR, so tests never touch /etc/slurm
# or a running system munged. Prints the slurm.conf path on success; the
# caller exports SLURM_CONF=<that path> and later runs stop-local-slurm.sh.
# Usage: start-local-slurm.sh STATE_DIR [OWNER_PID]
# With OWNER_PID, a watcher stops the cluster once that process is gone, so a
# test killed at its timeout (no TearDown) leaves no daemons behind.
# With GPUS=N, the node has N GPUs as generic resources (gres/gpu, the files
# /dev/nvidia0 to N-1, or GPU_DEVICE_FILES), so `--gres=gpu:1` gives each task
# one GPU of its own (Slurm sets its CUDA_VISIBLE_DEVICES).
set -euo pipefail
dir=${1:?usage: start-local-slurm.sh STATE_DIR [OWNER_PID]}
owner=${2:-}
mkdir -p "$dir"
export PATH="$PATH:/usr/sbin:/sbin"
dir=$(cd "$dir" && pwd)
rm -f "$dir/stopped"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 700 "$dir/munge"

for tool in munged slurmctld slurmd sinfo; do
  command -v "$tool" >/dev/null || { echo "not installed: $tool (apt-get install slurm-wlm munge)" >&2; exit 4; }
done

# Free ports, so two runs (or a real Slurm on the machine) never collide.
read -r ctld_port slurmd_port < <(python3 - <<'PY' 2>/dev/null || echo "$((20000 + RANDOM % 20000)) $((40000 + RANDOM % 20000))"
import socket
ports = []
socks = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s); ports.append(s.getsockname()[1])
print(*ports)
PY
)

dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"

mem=100
gpus=${GPUS:-0} gres_types="" node_gres=""
if ((gpus > 0)); then
  files=(${GPU_DEVICE_FILES:-})
  ((${#files[@]} > 0)) || for ((i = 0; i < gpus; ++i)); do files+=("/dev/nvidia$i"); done
  : >"$dir/gres.conf"
  for f in "${files[@]:0:gpus}"; do echo "NodeName=localhost Name=gpu File=$f" >>"$dir/gres.conf"; done
  gres_types="GresTypes=gpu"
  node_gres="Gres=gpu:$gpus"
fi
cat > "$dir/slurm.conf" <<CONF
ClusterName=graderci
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
$gres_types
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem $node_gres State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

# slurmd sets up cgroups for its job steps through systemd's D-Bus where it finds
# cgroup v2; a container has no systemd, so it makes the folders itself, under a
# system.slice that must exist (seen on a GPU machine's container: slurmd stopped
# with "Could not create scope directory .../system.slice/..._slurmstepd.scope").
cat > "$dir/cgroup.conf" <<CONF
IgnoreSystemd=yes
IgnoreSystemdOnFailure=yes
CONF
if [[ -f /sys/fs/cgroup/cgroup.controllers && ! -d /sys/fs/cgroup/system.slice ]]; then
  mkdir /sys/fs/cgroup/system.slice 2>/dev/null || true
fi

export SLURM_CONF="$dir/slurm.conf"
if [ -n "$owner" ]; then
  stop_script="$(cd "$(dirname "$0")" && pwd)/stop-local-slurm.sh"
  setsid bash -c 'while kill -0 "$1" 2>/dev/null && [ -f "$2/slurm.conf" ] && [ ! -e "$2/stopped" ]; do sleep 2; done; bash "$3" "$2"' \
    watcher "$owner" "$dir" "$stop_script" </dev/null >/dev/null 2>&1 &
fi
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N localhost

# Ready when the node accepts jobs (idle); a node that comes up drained says why.
for _ in $(seq 1 60); do
  state=$(sinfo -h -N -n localhost -o '%T' 2>/dev/null || true)
  case "$state" in
    idle*|mixed*|allocated*) echo "$SLURM_CONF"; exit 0 ;;
  esac
  sleep 0.5
done
echo "local Slurm did not become ready in 30 s (node state: '${state:-none}'); logs in $dir/log" >&2
tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 2>/dev/null || true
exit 4
