// The contract between the shared programs and one lab's driver.cu.
//
// A driver describes its cases (named in lab.json) and, for a case, builds a
// Problem: its buffers, its inputs made from a seed, and the two variants that
// can be launched, the student's candidate (through the launcher in kernel.cu)
// and the lab's naive baseline. driver.cu is compiled twice:
//   - into the referee (MEMLABS_REFEREE defined), the trusted program that owns
//     every buffer, writes the inputs, runs the baseline and checks the outputs;
//   - into the submission's program, the worker, which maps the referee's
//     buffers and only ever runs the candidate when asked.
// Code that calls into kernel.cu goes inside CANDIDATE_ONLY(...): the referee's
// build leaves it out, so no student code is linked into the referee.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "output_buffer.cuh"
#include "random.cuh"

#ifdef MEMLABS_REFEREE
#define CANDIDATE_ONLY(...) \
  do {                      \
  } while (0)
#else
#define CANDIDATE_ONLY(...) \
  do {                      \
    __VA_ARGS__;            \
  } while (0)
#endif

namespace memlabs {

enum class Variant { candidate, baseline };

// True in the referee's build (and its trusted server), false in the submission's program.
constexpr bool kInReferee =
#ifdef MEMLABS_REFEREE
    true;
#else
    false;
#endif

// Something about the student's run that is not an output value: a pointer is
// managed, no device memory leaked, a reported device property. Graded by the
// manifest's "api" checks.
struct Fact {
  std::string name;  // as named in lab.json
  bool ok = false;
  std::string detail;  // what was seen, e.g. "expected 132, got 0"
};

// A buffer the candidate reads but must leave as it found it.
struct Input {
  std::string name;  // as lab.cuh names the parameter, e.g. "in"
  const void* data;
  std::size_t bytes;
};

class Problem {
 public:
  virtual ~Problem() = default;

  // The constructor allocates every DeviceBuffer and OutputBuffer, in an order
  // and of sizes that depend only on the case (the referee and the worker build
  // the same problem and the worker maps the referee's buffers in that order).

  // Writes every input: the device inputs from `device_seed`, then
  // host_inputs(host_seed). Runs where inputs are made (the referee, a
  // standalone run), never in the worker; new seeds mean new inputs in the
  // same buffers. Timing gives every launch of a batch its own device seed
  // and all of them one host seed, since host-side state (a __constant__
  // table the student's code uploads) exists once per process.
  virtual void fill(std::uint64_t device_seed, std::uint64_t host_seed) = 0;
  // The host-side inputs the student's functions take (host arrays, a table
  // the student uploads), made from `host_seed` in every process before a launch.
  virtual void host_inputs(std::uint64_t /*host_seed*/) {}

  // Launches one variant on `stream`. Repeatable: many launches on the same inputs.
  virtual void run(Variant variant, cudaStream_t stream) = 0;
  // The outputs: poisoned and guarded before a run, checked after.
  virtual std::vector<Output*> outputs() = 0;
  // The fewest bytes a correct kernel must move through device memory (each
  // input read once, each output written once): the floor for "% of peak" and
  // for "faster than memory allows".
  virtual double bytes_moved() const = 0;
  // Floating-point operations, when GFLOP/s is the natural unit (0 = not).
  virtual double flops() const { return 0; }
  // The expected outputs computed on the CPU in float64 from the last fill's
  // seed, one vector per output, in the order of outputs(). Correctness is
  // judged against it; only called on small cases.
  virtual std::vector<std::vector<double>> oracle() const = 0;
  // Host work around a run that is not timed, for labs whose lesson is the GPU
  // side of a host pipeline: prepare() runs before run() (the host writes the
  // inputs), finish() right after run() returns (the host reads the results
  // into the outputs; run() must have waited for its GPU work, as a host
  // program would). Both run in the same process as run().
  virtual bool host_steps() const { return false; }
  virtual void prepare(Variant) {}
  virtual void finish(Variant, cudaStream_t) {}
  // How much slower the baseline may run beside the submission's program than
  // alone before the timing is not trusted (work the program left running on
  // the GPU shows up here). A lab whose data moves by page faults needs more:
  // two processes' managed memory share the driver's fault handling.
  virtual double interference_limit() const { return 1.10; }
  // What "% of memcpy" compares with: a device-to-device cudaMemcpy of half of
  // bytes_moved() (read and written), or, for a lab whose data crosses the
  // host's link, as many bytes of pinned host memory copied to the device while
  // as many come back, the link's two directions at once.
  virtual bool peak_over_host_link() const { return false; }
  // An optional library implementation timed alongside (cuBLAS, CUB), so a
  // lab can report "% of cuBLAS" measured in the same run. Empty: none.
  // run_library runs in the referee's trusted server only: driver.cu defines
  // it, and includes the library's headers, under MEMLABS_REFEREE, so the
  // submission's program neither contains nor links the library (lab.json's
  // "link" libraries are linked into the referee alone).
  virtual std::string library_name() const { return ""; }
  virtual void run_library(cudaStream_t) {}
  // Facts about the last run of the candidate, gathered in the worker after it
  // (default: none). They are the submission's own report, so the referee
  // passes them through judge() before they count.
  virtual std::vector<Fact> facts() { return {}; }
  // In the referee: the final facts from what the worker reported. A fact
  // the referee can check itself (a device property) is recomputed here;
  // the default keeps the report.
  virtual std::vector<Fact> judge(std::vector<Fact> reported) { return reported; }
  // The device inputs the candidate reads (default: none). The referee keeps
  // their bytes and compares after the candidate ran, so a kernel that writes
  // into its input (through a cast) is caught even when its output is right.
  virtual std::vector<Input> inputs() const { return {}; }
};

struct CaseInfo {
  std::string name;         // as named in lab.json, e.g. "1000x777"
  std::string description;  // e.g. "1000 rows x 777 columns of float"
};

struct LabDefinition {
  std::vector<CaseInfo> cases;
  std::unique_ptr<Problem> (*make)(const std::string& case_name);
};

// Each driver.cu defines this.
LabDefinition define_lab();

}  // namespace memlabs
