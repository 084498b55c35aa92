// The contract between the shared runner and one lab's driver.cu.
//
// A driver describes its cases (named in lab.json) and, for a case and a seed,
// builds a Problem: inputs made from the seed, poisoned outputs, and the two
// variants the runner can launch, the student's candidate (through the
// launcher in kernel.cu) and the lab's naive baseline. Everything else
// (timing, checking, the result file) is the runner's job, the same for every lab.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "output_buffer.cuh"
#include "random.cuh"

namespace memlabs {

enum class Variant { candidate, baseline };

// Something the driver checked about the student's run that is not an output
// value: a pointer is managed, no device memory leaked, a reported device
// property matches the runtime's. Graded by the manifest's "api" checks.
struct Fact {
  std::string name;    // as named in lab.json
  bool ok = false;
  std::string detail;  // what was seen, e.g. "expected 132, got 0"
};

// A buffer the candidate reads but must leave as it found it: device memory,
// or host memory for labs whose functions take host arrays.
struct Input {
  std::string name;  // as lab.cuh names the parameter, e.g. "in"
  const void* data;
  std::size_t bytes;
};

class Problem {
 public:
  virtual ~Problem() = default;
  // Launches one variant on `stream`. Must be repeatable: the runner launches
  // each variant many times on the same inputs while timing.
  virtual void run(Variant variant, cudaStream_t stream) = 0;
  // The outputs the runner poisons, guards, checks and dumps.
  virtual std::vector<Output*> outputs() = 0;
  // The fewest bytes a correct kernel must move through device memory (each
  // input read once, each output written once): the floor for "% of peak" and
  // for "faster than memory allows".
  virtual double bytes_moved() const = 0;
  // Floating-point operations, when GFLOP/s is the natural unit (0 = not).
  virtual double flops() const { return 0; }
  // The expected outputs computed on the CPU in float64 from the same inputs,
  // one vector per output, in the order of outputs(). Used to validate the
  // reference in the test suite; only called on small cases.
  virtual std::vector<std::vector<double>> oracle() const = 0;
  // Host work around a run that is not timed, for labs whose lesson is the GPU
  // side of a host pipeline: prepare() runs before run() (the host writes the
  // inputs), finish() right after run() returns (the host reads the results
  // into the outputs; run() must have waited for its GPU work, as a host
  // program would). With host_steps() true, prepare() runs before each timed
  // launch's start event and finish() after its end event.
  virtual bool host_steps() const { return false; }
  virtual void prepare(Variant) {}
  virtual void finish(Variant, cudaStream_t) {}
  // An optional library implementation timed alongside (cuBLAS, CUB), so a
  // lab can report "% of cuBLAS" measured in the same run. Empty: none.
  virtual std::string library_name() const { return ""; }
  virtual void run_library(cudaStream_t) {}
  // Facts about the last run of the candidate (default: none).
  virtual std::vector<Fact> facts() { return {}; }
  // The inputs run() hands the candidate read-only (default: none). The runner
  // copies them before a correctness run and compares after, so a kernel that
  // writes into its input (through a cast) is caught even when its output is right.
  virtual std::vector<Input> inputs() const { return {}; }
};

struct CaseInfo {
  std::string name;         // as named in lab.json, e.g. "1000x777"
  std::string description;  // e.g. "1000 rows x 777 columns of float"
};

struct LabDefinition {
  std::vector<CaseInfo> cases;
  std::unique_ptr<Problem> (*make)(const std::string& case_name, std::uint64_t seed);
};

// Each driver.cu defines this.
LabDefinition define_lab();

}  // namespace memlabs
