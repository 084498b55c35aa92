// The lab manifest (labs/<lab>/lab.json): the only place a lab's steps, checks
// and thresholds live. Parsing is strict so that a typo in a manifest is an
// error an instructor sees at once, not a check that silently never runs.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/referee_protocol.hpp"

namespace grader {

// The manifest format this grader reads.
inline constexpr int kManifestFormatVersion = 1;

// The kinds of check format 1 knows, in the order error messages list them.
// Everything else about a kind is in its row of check_kinds(); a report names
// a kind by its lab.json name (name_of).
enum class CheckKind {
  correct,
  speedup,
  fraction_of_peak,
  ptxas,
  ptx,
  api,
  fraction_of_library,
  ncu,
  sanitizer,
  overlap
};

struct Check {
  CheckKind kind = CheckKind::correct;
  std::string kernel;                                                  // ptx, ptxas
  std::vector<std::string> must_contain, must_not_contain;             // ptx
  std::optional<int> max_stack_frame, max_spill_bytes, max_registers;  // ptxas
  std::vector<std::string> cases;                                      // correct, sanitizer
  std::string case_name;           // speedup, fraction_of_peak, fraction_of_library, api, ncu, overlap ("case" in JSON)
  std::vector<std::string> facts;  // api: facts that must hold (empty: every reported fact)
  double min = 0;                  // speedup: > 0; fraction_of_peak, overlap: in (0, 1]
  std::string over = "baseline";   // speedup
  std::string metric;              // ncu: a measure ncu_report.hpp knows
  double max = 0;                  // ncu: an at-most measure must not exceed it
  double ncu_min = 0;              // ncu: an at-least measure must reach it ("min" in JSON)
  std::vector<Check> fallback;     // ncu: at most one check that stands in where ncu cannot run
  std::vector<std::string> tools;  // sanitizer: compute-sanitizer tools (default: all four)
  // Static checks read the compiler's output only, so they run without a GPU.
  bool is_static() const;
};

namespace manifest_detail {
class Reader;
}

// Everything the grader knows of one check kind, written once (check_kinds()
// in manifest_checks.cpp): its keys in lab.json, how it is read, whether it
// runs without a GPU, and for a timed kind how the referee names its result.
struct CheckKindTraits {
  CheckKind kind;
  std::string name;               // as in lab.json: "speedup"
  std::vector<std::string> keys;  // every key a check of this kind may hold
  void (*read)(const manifest_detail::Reader&, const nlohmann::json&, const std::string& path, Check&);
  bool is_static = false;  // reads the compiler's output only: runs without a GPU
  // A timed kind's ratio (one timing session per case serves every timed check
  // of it), by the same name in the referee's timing result and in a request's
  // threshold (`referee time --decide NAME:MIN`); nothing for a kind not timed.
  std::optional<memlabs::TimedRatio> ratio;
  // --first-failure-only's order, cheapest first: 0 reads the compiler's
  // output; 1 reads the correctness run, which every grade makes; 2 a
  // compute-sanitizer run; 3 an ncu run (one profile at a time machine-wide);
  // 4 a timing (the GPU alone). From 2 up a check has a run of its own.
  int cost_rank = 0;
  // How a lesson's "Checked" list says a check of this kind, in Markdown:
  // "`speedup`: at least 2.5× the baseline's speed at case `8192x8192`".
  std::string (*in_words)(const Check&) = nullptr;
};
// check_kinds()'s in_words for `c`.
std::string check_in_words(const Check& c);
const std::vector<CheckKindTraits>& check_kinds();
const CheckKindTraits& traits_of(CheckKind kind);
const CheckKindTraits* check_kind_traits(const std::string& name);  // nullptr for an unknown name
// Its name in lab.json and in reports: "fraction_of_peak".
const std::string& name_of(CheckKind kind);
// In JSON a kind is its name, never its number.
void to_json(nlohmann::json& j, CheckKind kind);

// A check the referee times (speedup, fraction_of_peak, fraction_of_library):
// one timing session per case serves them all.
bool is_timed_kind(CheckKind kind);
inline bool is_timed(const Check& c) { return is_timed_kind(c.kind); }
// The ratio a timed kind judges (its interval in the referee's timing result,
// its threshold in a request: common/protocol/referee_protocol.hpp); throws
// std::logic_error for a kind the referee does not time.
memlabs::TimedRatio timed_ratio(CheckKind kind);

struct Step {
  int id = 0;
  std::string title;
  int points = 1;
  std::vector<Check> checks;
  std::vector<std::string> hints;  // ordered concept -> location -> code
  std::map<std::string, std::string> symptom_hints;
  // The compute capability the step's technique needs, as major * 10 + minor
  // (90: the bulk copies of sm_90); a grade for an older GPU or arch does not
  // grade the step (compute_capability_shortfall in grading.hpp).
  std::optional<int> min_compute_capability;
  // Every case its checks (and their fallbacks) name, each once.
  std::vector<std::string> cases() const;
};

// A compute capability as min_compute_capability writes it (90) the way
// NVIDIA's documents and the student read it ("9.0").
std::string dotted_compute_capability(int cc);

struct Manifest {
  int format_version = 0;
  std::string id, title, student_file = "kernel.cu";
  double timeout_s = 60;
  std::vector<std::string> link;
  std::vector<std::string> bench_cases;  // timed by `grader bench` in addition to the graded ones
  // Hints for what a failing check measured (its symptom), for every step; a
  // step's own symptom_hints win over these.
  std::map<std::string, std::string> symptom_hints;
  // Kinds of red flag (grader/program/red_flags.hpp) that the lab's technique
  // itself raises, so its grades do not note them: lab10 makes streams of its own.
  std::vector<std::string> teaches;
  std::vector<Step> steps;

  const Step* find_step(int id) const;
  // Every case named by any check, unique, in order of first use.
  std::vector<std::string> all_cases() const;
  // Every case of the steps that name `case_name`: where a program hung in it,
  // the runs those steps need would hang too, and other steps' would not.
  std::vector<std::string> cases_of_steps_naming(const std::string& case_name) const;
};

class ManifestError : public std::runtime_error {
  using runtime_error::runtime_error;
};

// The check kinds format 1 knows, in the order error messages list them.
const std::vector<std::string>& known_check_kinds();

// source_name prefixes every error message (normally the manifest's path).
Manifest parse_manifest(const nlohmann::json& j, const std::string& source_name);
// A lab's labs/<lab>/lab.json, with the course's shared symptom hints
// (labs/symptom_hints.json, when there is one) under the lab's own.
Manifest load_manifest(const std::filesystem::path& file);
// The lab.json alone.
Manifest load_lab_manifest(const std::filesystem::path& file);
inline constexpr const char* kCourseSymptomHints = "symptom_hints.json";

}  // namespace grader
