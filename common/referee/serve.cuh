// The loop of a process the referee serves with: the submission's program (the
// worker) and the referee's own trusted server run the same code. It builds
// problems over the buffers the referee sends, and runs what it is asked to on
// them: the worker only ever the candidate, the trusted server the baseline,
// the library and a plain copy. It never makes inputs and never judges anything.
//
// Requests (JSON over the socket, one reply each; buffers come as descriptors):
//   open    {case, set} + fds   build problem `set` of `case` over the buffers
//   inputs  {sets, seed}        host_inputs(seed) of each set
//   before  {sets, variant}     prepare(variant): the host's untimed writes
//   run     {sets, variant}     run(variant) on each set, then wait for the GPU
//   after   {sets, variant}     finish(variant): the host's untimed reads
//   library {sets}              the library version on each set, then wait (the
//                               trusted server only: the worker answers an error,
//                               since its driver.cu holds no library code)
//   copy    {bytes, times}      cudaMemcpy device to device, `times` times, then wait
//   nop     {}                  an empty kernel, then wait: the cost of a request itself
//   facts   {set}               the facts the problem reports after the candidate ran
//   close   {}                  reply, then exit
// Every request carries an "id" (a random number) that its reply gives back: a
// reply queued ahead of its request cannot know it (ServerProcess::request).
// A reply is {"ok": true, ...} or {"ok": false, "error": {...}}; after a CUDA
// error the process exits, since its context is no longer usable.
#pragma once

#include <cuda_runtime.h>

#include "protocol/server_role.hpp"

namespace memlabs {

// The nop request's kernel, which does nothing (support_kernels.cu).
void launch_empty_kernel(cudaStream_t stream);

// The standalone run's marker between the harness's launches and the
// candidate's (candidate_marker.hpp; support_kernels.cu).
void launch_candidate_marker(cudaStream_t stream);

// Serves on the socket `fd` until told to close or the referee goes; the exit code.
int serve(int fd, ServerRole role);

}  // namespace memlabs
