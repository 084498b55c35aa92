// The timing protocol, run by the referee (referee.cuh). Every time is taken
// in the referee, from sending a request to its reply, the same way for the
// baseline (A) and the library (L), a plain copy of the same bytes (C) and an
// empty request (N) in the trusted server, and for the candidate (B) in the
// submission's program. Each request launches a batch on distinct buffer sets,
// so the request's own cost is small next to it, and N measures that cost so
// it can be taken off: a per-launch time is (slot - N) / launches.
//
// A round is two halves on fresh inputs, A B C L N then N L C B A, so drift
// cancels in the per-round ratios. Before each half the referee writes new
// random inputs for every set; the submission's program is paused (SIGSTOP)
// from then until its request, and again from its reply on, so it can neither
// see the inputs early nor touch anything outside its own request. L2 is
// flushed before every slot. After every candidate batch the referee checks
// every candidate output for poison and canaries, the inputs for changes, and
// the values of a random sample of sets (chosen after the batch ran) against
// the baseline's on the same inputs: a kernel that is right once and cheap
// later, or remembers earlier results, fails there.
//
// The rounds go on until each ratio's interval is within ±2 % or the time cap,
// longer while a threshold lies inside an interval. A grade names its
// thresholds (--decide): once at least 6 rounds put every one of them outside
// its interval, the session stops there, since more rounds would only narrow it.
// The warm-up before the rounds is two rounds and 100 ms of them: the GPU is
// busy through a round (fresh inputs, slots, checks), not only in its slots. The baseline is also timed
// alone, before the submission's program starts and after it is gone: if it
// ran slower while the submission's program merely existed, something of its
// kept the GPU busy, and the times are not used.
#pragma once

#include <nlohmann/json.hpp>

#include "host/gpu_turn.hpp"
#include "referee.cuh"

namespace memlabs {

// Fills result["timing"] (and result["status"], result["failure"]) for a.cases[0].
// `turn`, when given, is this referee's turn on the GPU, held shared: the
// session takes it alone for what it times and gives it back before its teardown.
void time_mode(const LabDefinition& lab, const RefereeArgs& a, nlohmann::json& result, GpuTurnFiles* turn = nullptr);

// Takes `use` on `turn`, noting a wait among the referee's phases.
void take_gpu_turn(GpuTurnFiles& turn, GpuUse use);

}  // namespace memlabs
