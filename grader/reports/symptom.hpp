// What a failing check can say it measured (its symptom), written once: every
// symptom, its name (in reports, in lab.json's symptom_hints and in fixture
// expectations), and, for those that explain others, which comes first when
// several checks of a step fail.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "run_category.hpp"

namespace grader {

enum class Symptom {
  // correctness and the program's run (the run's own ending: RunCategory's names)
  mismatch,
  unwritten,
  canary,
  timeout,
  crash,
  cuda_error,
  no_result,
  implausibly_fast,
  noisy,
  local_memory,
  api,
  bad_output,
  error,
  process_limit,
  // the referee: a timed launch wrong after right ones, the reply before the work, the GPU kept
  // busy, a broken reply, a timed request that failed otherwise
  timed_mismatch,
  early_reply,
  interference,
  protocol,
  timed_failure,
  // what is not the submission's doing: a wrong call of the referee, no GPU, the referee itself,
  // a run no check needed (such a check is not graded)
  usage,
  no_device,
  referee,
  cancelled,
  // correctness: an input changed, wrong only at sizes off a multiple of 32, two runs differ
  modified_input,
  edge_mismatch,
  nondeterministic,
  // ncu
  bank_conflicts,
  uncoalesced,
  memory_space,
  not_the_named_kernel,
  not_your_kernel,
  // a traced run: copies and kernels one after another where they should overlap
  no_overlap,
  // compute-sanitizer
  race,
  out_of_bounds,
  uninitialized,
  divergent_barrier,
  leak,
  api_error,
  sanitizer,  // the last: kEverySymptom lists them all, which a test counts against it
};

// Every symptom, in the order lint messages list them.
inline constexpr Symptom kEverySymptom[] = {Symptom::mismatch,
                                            Symptom::unwritten,
                                            Symptom::canary,
                                            Symptom::timeout,
                                            Symptom::crash,
                                            Symptom::cuda_error,
                                            Symptom::no_result,
                                            Symptom::implausibly_fast,
                                            Symptom::noisy,
                                            Symptom::local_memory,
                                            Symptom::api,
                                            Symptom::bad_output,
                                            Symptom::error,
                                            Symptom::process_limit,
                                            Symptom::timed_mismatch,
                                            Symptom::early_reply,
                                            Symptom::interference,
                                            Symptom::protocol,
                                            Symptom::timed_failure,
                                            Symptom::usage,
                                            Symptom::no_device,
                                            Symptom::referee,
                                            Symptom::cancelled,
                                            Symptom::modified_input,
                                            Symptom::edge_mismatch,
                                            Symptom::nondeterministic,
                                            Symptom::bank_conflicts,
                                            Symptom::uncoalesced,
                                            Symptom::memory_space,
                                            Symptom::not_the_named_kernel,
                                            Symptom::not_your_kernel,
                                            Symptom::no_overlap,
                                            Symptom::race,
                                            Symptom::out_of_bounds,
                                            Symptom::uninitialized,
                                            Symptom::divergent_barrier,
                                            Symptom::leak,
                                            Symptom::api_error,
                                            Symptom::sanitizer};
// "race": as a check result and lab.json's symptom_hints name it.
const char* name_of(Symptom s);
// The symptom of that name, or nothing.
std::optional<Symptom> symptom_named(const std::string& name);
// When several checks of a step fail, the lowest rank chooses the hint: the
// symptom closest to the cause (a race explains a mismatch, not the other way
// round). 0: below every ranked symptom.
int rank_of(Symptom s);
// The ranked symptoms, closest to the cause first.
const std::vector<Symptom>& symptoms_closest_to_the_cause_first();

// What a failing check reports of a run that ended so (a run that ended well
// and still failed its check: error).
Symptom symptom_of(RunCategory c);

// In JSON a symptom is its name; a check that reports none writes "".
nlohmann::json symptom_json(const std::optional<Symptom>& s);
// Throws std::runtime_error for a name no check reports.
std::optional<Symptom> symptom_from_json(const nlohmann::json& j);

}  // namespace grader
