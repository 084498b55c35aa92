// Checks the referee makes on the GPU, in its own process, so that every timed
// launch can be verified without copying hundreds of megabytes to the host:
// what an output holds (poison left, canaries overwritten), how far it is from
// the trusted one, and whether an input still has the bytes it was given.
#pragma once

#include <cstdint>
#include <vector>

#include "lab/output_buffer.cuh"

namespace memlabs {

struct OutputScan {
  std::size_t unwritten = 0;        // elements still holding the poison pattern
  std::size_t first_unwritten = 0;  // count() when none
  bool guard_before_intact = true, guard_after_intact = true;
  bool clean() const { return unwritten == 0 && guard_before_intact && guard_after_intact; }
};
OutputScan scan_output(const Output& out, cudaStream_t stream);

// How many of `samples` places in each output, drawn from `seed`, still hold
// the poison: one small kernel and one synchronisation, cheap enough to sit
// inside a timed slot (a full scan reads every byte of every output).
std::size_t sampled_unwritten(const std::vector<const Output*>& outputs, std::uint64_t seed, unsigned samples,
                              cudaStream_t stream);

struct DeviceComparison {
  std::size_t mismatches = 0;
  std::size_t first = 0;         // index of the first mismatch (count() when none)
  double expected = 0, got = 0;  // at `first`
};
// `got` against `expected` (same shape and type), within `scale` times the
// output's tolerance: two results each within tolerance of the exact answer
// are within twice of each other.
DeviceComparison compare_outputs(const Output& expected, const Output& got, double scale, cudaStream_t stream);

// An order-independent 64-bit digest of `bytes` bytes of device memory.
std::uint64_t device_digest(const void* data, std::size_t bytes, cudaStream_t stream);

}  // namespace memlabs
