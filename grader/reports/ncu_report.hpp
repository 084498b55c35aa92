// Hardware counters from Nsight Compute (ncu): which counters a check asks
// for, how ncu is run on every launch of one kernel, and what its CSV log says.
// The manifest names a measure ("shared_bank_conflicts_per_request"); this file
// knows the ncu metrics behind it and how to turn them into one number per
// launch and a sentence a student can act on.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "run_category.hpp"
#include "symptom.hpp"

namespace grader {

struct NcuValue {
  double value = 0;
  std::string summary;               // "31.0 bank conflicts per shared-memory request"
  std::vector<std::string> details;  // the counters it came from
  // The PTX instruction classes the cost came from ("ld.shared" for conflicts on
  // loads), so a failing check can name the kernel.cu lines that have them.
  std::vector<std::string> look_at;
};

struct NcuMeasure;

// What a measure reads of one launch: its counters in the order the measure
// names them, the launch, and the case's output elements (0 when not counted).
struct NcuReading {
  const NcuMeasure& measure;
  const std::vector<double>& v;
  double blocks = 0;
  double elements = 0;
};

struct NcuMeasure {
  std::string name;                                   // as in lab.json
  std::string unit;                                   // how the value reads: "bank conflicts per shared-memory request"
  std::vector<std::string> metrics;                   // the raw ncu metrics it needs
  NcuValue (*value_of)(const NcuReading&) = nullptr;  // the number and the sentences
  Symptom symptom = Symptom::memory_space;            // what a failing check reports (docs/json-output.md)
  // at_most: a cost that must stay low (lab.json "max"); at_least: evidence
  // that the kernel really did something at run time (lab.json "min").
  enum Rule { at_most, at_least } rule = at_most;
  // Divided by the case's output elements (as the referee counted them) and taken over
  // all the kernel's launches in the case together: work per element, however
  // the launcher splits it.
  bool per_element = false;
  // Divided by the values the same launch stored itself (its store sectors,
  // 8 four-byte values each), launch by launch: what one launch did for each
  // output it wrote, so a launch that does its work another way cannot hide
  // behind one that shows the technique on a corner of the output. Launches
  // that store nothing are not judged. The store counter is the measure's last.
  // The values a launch stored count at most the case's output elements: a
  // kernel that stores its outputs many times over does not thin its loads.
  bool per_stored_value = false;
};

// More launches of the named kernel than this in one profiled case fail the
// check: every launch is profiled, so none can stand in for another, and a
// case needs only a few.
constexpr int kMaxProfiledLaunches = 32;

const std::vector<NcuMeasure>& ncu_measures();
const NcuMeasure* find_ncu_measure(const std::string& name);
// A check's bound as a failing summary and grader check say it: "at least
// 8.0", "at most 0.050", or "0" for a count that must be zero.
std::string ncu_bound_in_words(const NcuMeasure& measure, double bound);

// Every launch in one profiled run, the harness's included (launch_record.hpp):
// more than this and the run fails, since a launch past ncu's count would go unseen.
constexpr int kMaxLaunchesInARun = 64;

// The arguments that go before the program's own: every launch of every kernel
// (up to one more than kMaxLaunchesInARun, so that too many can be told), named
// by its mangled name (kernel.cu's are told from others by their PTX entries),
// unmodified clocks (the grader never changes the GPU's settings), the given
// metrics only (those of every measure asked of this case: one profiling run
// serves them all), a CSV log in `log_file`.
std::vector<std::string> ncu_arguments(const std::filesystem::path& ncu, const std::vector<std::string>& metrics,
                                       const std::filesystem::path& log_file);

// One profiled launch.
struct NcuLaunch {
  std::string kernel;                     // its mangled name (ncu's --print-kernel-base mangled)
  double blocks = 0;                      // the grid's size in blocks ("Grid Size")
  std::map<std::string, double> metrics;  // metric name -> value (units as ncu prints them)
};

struct NcuLog {
  // ok: at least one launch was profiled. not_permitted: the driver refuses
  // access to the counters (ERR_NVGPUCTRPERM). no_kernel: the program never
  // launched the kernel. failed: anything else ncu reports as an error.
  enum Status { ok, not_permitted, no_kernel, failed } status = failed;
  std::string message;                // when not ok: one line, from ncu's own words
  std::vector<NcuLaunch> launches;    // ok: in launch order
  std::vector<std::string> launched;  // no_kernel: the kernels ncu did see
  // What the program did, read from its counters: the same program would make the
  // same log. Not so for an error of ncu or of the machine (not_permitted, failed).
  bool measured() const { return status == ok || status == no_kernel; }
};

NcuLog parse_ncu_log(const std::string& log);

// Whose fact an ncu run that measured nothing is (LabGrader::check_ncu):
// - machine: ncu may not read the counters here; the manifest's fallback, if
//   any, grades the step, as where ncu is missing;
// - program: it never launched the kernel, or crashed or hung under ncu
//   (`outcome` is the run's RunnerOutcome::category); the check fails;
// - tool: ncu itself failed on the program ("Failed to prepare kernel for
//   profiling" under load, a driver error). A program may provoke that on
//   purpose, so it never passes a check nor calls in a fallback: the run is
//   made once more, and if it fails again the check is not graded.
enum class NcuFailure { machine, program, tool };
NcuFailure whose_failure(const NcuLog& log, RunCategory outcome);

// The launches a measure judges: each on its own, or for a per-element
// measure all of them summed into one.
std::vector<NcuLaunch> judged_launches(const NcuMeasure& measure, const std::vector<NcuLaunch>& launches);

// Empty when a metric the measure needs is missing from the log, or a
// per-element measure has no element count.
std::optional<NcuValue> evaluate(const NcuMeasure& measure, const NcuLaunch& launch, double elements = 0);

// Every judged launch against the check's bound (at most `bound` for a cost,
// at least `bound` for evidence): passing needs every one to meet it.
struct NcuJudgement {
  enum Status { ok, fails, too_many_launches, not_measured } status = not_measured;
  NcuValue worst;                // the launch furthest from passing (or nearest to failing)
  std::size_t worst_launch = 0;  // its index among the judged launches
  std::size_t judged = 0, failing = 0;
  std::vector<double> values;  // one per judged launch
};
NcuJudgement judge_launches(const NcuMeasure& measure, const std::vector<NcuLaunch>& launches, double bound,
                            double elements);

// "31.0", "0.0", and for small values enough digits to be seen: "0.000031".
std::string readable_amount(double value);

}  // namespace grader
