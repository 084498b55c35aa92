// The one list of symptoms (symptom.hpp).
#include "symptom.hpp"

#include <algorithm>
#include <stdexcept>

#include "protocol/named_enum.hpp"

namespace grader {

// Long (a case a symptom, so the compiler asks for a new one's name) on purpose.
const char* name_of(Symptom s) {
  switch (s) {
    case Symptom::mismatch:
      return "mismatch";
    case Symptom::unwritten:
      return "unwritten";
    case Symptom::canary:
      return "canary";
    case Symptom::timeout:
      return "timeout";
    case Symptom::crash:
      return "crash";
    case Symptom::cuda_error:
      return "cuda_error";
    case Symptom::no_result:
      return "no_result";
    case Symptom::implausibly_fast:
      return "implausibly_fast";
    case Symptom::noisy:
      return "noisy";
    case Symptom::local_memory:
      return "local_memory";
    case Symptom::api:
      return "api";
    case Symptom::bad_output:
      return "bad_output";
    case Symptom::error:
      return "error";
    case Symptom::process_limit:
      return "process_limit";
    case Symptom::timed_mismatch:
      return "timed_mismatch";
    case Symptom::early_reply:
      return "early_reply";
    case Symptom::interference:
      return "interference";
    case Symptom::protocol:
      return "protocol";
    case Symptom::timed_failure:
      return "timed_failure";
    case Symptom::usage:
      return "usage";
    case Symptom::no_device:
      return "no_device";
    case Symptom::referee:
      return "referee";
    case Symptom::cancelled:
      return "cancelled";
    case Symptom::modified_input:
      return "modified_input";
    case Symptom::edge_mismatch:
      return "edge_mismatch";
    case Symptom::nondeterministic:
      return "nondeterministic";
    case Symptom::bank_conflicts:
      return "bank_conflicts";
    case Symptom::uncoalesced:
      return "uncoalesced";
    case Symptom::no_overlap:
      return "no_overlap";
    case Symptom::memory_space:
      return "memory_space";
    case Symptom::not_the_named_kernel:
      return "not_the_named_kernel";
    case Symptom::not_your_kernel:
      return "not_your_kernel";
    case Symptom::race:
      return "race";
    case Symptom::out_of_bounds:
      return "out_of_bounds";
    case Symptom::uninitialized:
      return "uninitialized";
    case Symptom::divergent_barrier:
      return "divergent_barrier";
    case Symptom::leak:
      return "leak";
    case Symptom::api_error:
      return "api_error";
    case Symptom::sanitizer:
      return "sanitizer";
  }
  return "error";  // not reached: every Symptom is named above
}

// Long (a case a symptom, so the compiler asks where a new one ranks) on purpose.
int rank_of(Symptom s) {
  switch (s) {
    // compute-sanitizer's findings are the closest to a cause
    case Symptom::race:
      return 1;
    case Symptom::out_of_bounds:
      return 2;
    case Symptom::uninitialized:
      return 3;
    case Symptom::divergent_barrier:
      return 4;
    case Symptom::nondeterministic:
      return 5;
    case Symptom::modified_input:
      return 6;
    case Symptom::leak:
      return 7;
    case Symptom::api_error:
      return 8;
    case Symptom::canary:
      return 9;
    case Symptom::unwritten:
      return 10;
    case Symptom::timed_mismatch:
      return 11;
    case Symptom::edge_mismatch:
      return 12;
    case Symptom::not_your_kernel:
      return 13;  // a library's or the baseline's kernel ran: explains the counters
    case Symptom::not_the_named_kernel:
      return 14;
    case Symptom::memory_space:
      return 15;
    case Symptom::bank_conflicts:
      return 16;
    case Symptom::uncoalesced:
      return 17;
    case Symptom::local_memory:
      return 18;
    case Symptom::no_overlap:
      return 19;  // the work ran one thing at a time: explains a pipeline's missing speedup
    case Symptom::early_reply:
      return 20;  // the reply came before the outputs were written: explains a short time
    case Symptom::implausibly_fast:
      return 21;
    case Symptom::interference:
      return 22;
    // explain nothing else
    case Symptom::mismatch:
    case Symptom::timeout:
    case Symptom::crash:
    case Symptom::cuda_error:
    case Symptom::no_result:
    case Symptom::noisy:
    case Symptom::api:
    case Symptom::bad_output:
    case Symptom::error:
    case Symptom::process_limit:
    case Symptom::protocol:
    case Symptom::timed_failure:
    case Symptom::usage:
    case Symptom::no_device:
    case Symptom::referee:
    case Symptom::cancelled:
    case Symptom::sanitizer:
      return 0;
  }
  return 0;  // not reached: every Symptom is ranked above
}

std::optional<Symptom> symptom_named(const std::string& name) { return memlabs::enum_named(name, kEverySymptom); }

const std::vector<Symptom>& symptoms_closest_to_the_cause_first() {
  static const std::vector<Symptom> order = [] {
    std::vector<Symptom> ranked;
    for (Symptom s : kEverySymptom)
      if (rank_of(s) > 0) ranked.push_back(s);
    std::sort(ranked.begin(), ranked.end(), [](Symptom a, Symptom b) { return rank_of(a) < rank_of(b); });
    return ranked;
  }();
  return order;
}

Symptom symptom_of(RunCategory c) {
  switch (c) {
    case RunCategory::ok:
      return Symptom::error;
    case RunCategory::timeout:
      return Symptom::timeout;
    case RunCategory::crash:
      return Symptom::crash;
    case RunCategory::no_result:
      return Symptom::no_result;
    case RunCategory::cuda_error:
      return Symptom::cuda_error;
    case RunCategory::mismatch:
      return Symptom::mismatch;
    case RunCategory::timed_failure:
      return Symptom::timed_failure;
    case RunCategory::interference:
      return Symptom::interference;
    case RunCategory::usage:
      return Symptom::usage;
    case RunCategory::error:
      return Symptom::error;
    case RunCategory::protocol:
      return Symptom::protocol;
    case RunCategory::no_device:
      return Symptom::no_device;
    case RunCategory::referee:
      return Symptom::referee;
    case RunCategory::process_limit:
      return Symptom::process_limit;
    case RunCategory::cancelled:
      return Symptom::cancelled;
  }
  return Symptom::error;  // not reached: every RunCategory is read above
}

nlohmann::json symptom_json(const std::optional<Symptom>& s) { return s ? name_of(*s) : ""; }

std::optional<Symptom> symptom_from_json(const nlohmann::json& j) {
  const std::string name = j.get<std::string>();
  if (name.empty()) return std::nullopt;
  if (const auto s = symptom_named(name)) return s;
  throw std::runtime_error("\"" + name + "\" is not a symptom any check reports");
}

}  // namespace grader
