// How many hardware queues a process's CUDA context asks for. The driver makes
// a context's queues (CUDA_DEVICE_MAX_CONNECTIONS of them, 8 by default) one
// after another under a lock that every process on the GPU shares: on an H100,
// 16 processes starting CUDA at once took 3.2 s with 8 queues each and 1.2 s
// with one (docs/measurements/logs/h100-context-queues.log). A `grader check`
// starts about a thousand contexts, so this lock paced it.
//
// The referee and its trusted server each use one stream, so they ask for one
// queue; so do the tool runs (tool_run.cpp): ncu profiles one kernel at a time
// anyway, and compute-sanitizer checks each kernel's own accesses and
// barriers. The submission's program in a correctness run or a timing keeps
// the driver's default whatever the caller's environment says
// (submission_environment): its streams may need to overlap, and its grade must
// not depend on a user's shell. Host-only.
#pragma once

#include <cstdlib>

namespace memlabs {

inline constexpr const char* kHardwareQueuesVariable = "CUDA_DEVICE_MAX_CONNECTIONS";
inline constexpr const char* kOneHardwareQueue = "CUDA_DEVICE_MAX_CONNECTIONS=1";

// For a trusted process, before its first CUDA call.
inline void use_one_hardware_queue() { ::setenv(kHardwareQueuesVariable, "1", 1); }

}  // namespace memlabs
