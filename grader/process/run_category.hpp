// How a run of the submission's program ended, as the grader tells the cases
// apart: through the referee (referee_client.hpp) or under a tool
// (tool_run.hpp). Its name is what a failing check reports as its symptom.
#pragma once

namespace grader {

enum class RunCategory {
  ok,
  timeout,        // stopped at its time limit
  crash,          // ended by a signal
  no_result,      // ended before it answered
  cuda_error,     // a CUDA call or a kernel failed
  mismatch,       // answered, and some output is wrong (the cases say which)
  timed_failure,  // a timed request failed (the timing report says how)
  interference,   // the timing was disturbed by other work on the GPU
  usage,          // the referee was called wrongly: the grader's or the course's fault
  error,          // anything else the program did wrong
  protocol,       // it broke the protocol with the referee
  no_device,      // no usable GPU
  referee,        // the referee itself failed: the machine's or the course's fault
  process_limit,  // a tool run's program used up its processes
  cancelled,      // stopped because no check needed its answer
};

// "ok", "timeout", ...: as a symptom, in JSON and in messages.
const char* category_name(RunCategory c);

}  // namespace grader
