// The one table of symptoms (symptoms.hpp).
#include "symptoms.hpp"

#include <algorithm>

namespace grader {

const std::vector<SymptomTraits>& symptom_table() {
  static const std::vector<SymptomTraits> t = {
      // correctness and the program's run
      {"mismatch"},
      {"unwritten", 10},
      {"canary", 9},
      {"timeout"},
      {"crash"},
      {"cuda_error"},
      {"no_result"},
      {"implausibly_fast", 20},
      {"noisy"},
      {"local_memory", 18},
      {"api"},
      {"bad_output"},
      {"error"},
      {"process_limit"},
      // the referee: a timed launch wrong after right ones, the GPU kept busy, a broken reply
      {"timed_mismatch", 11},
      {"early_reply", 19},  // the reply came before the outputs were written: explains a time too short
      {"interference", 21},
      {"protocol"},
      // correctness: an input changed, wrong only at sizes off a multiple of 32, two runs differ
      {"modified_input", 6},
      {"edge_mismatch", 12},
      {"nondeterministic", 5},
      // ncu
      {"bank_conflicts", 16},
      {"uncoalesced", 17},
      {"memory_space", 15},
      {"not_the_named_kernel", 14},
      {"not_your_kernel", 13},  // a library's or the baseline's kernel ran: explains what the counters say
      // compute-sanitizer
      {"race", 1},
      {"out_of_bounds", 2},
      {"uninitialized", 3},
      {"divergent_barrier", 4},
      {"leak", 7},
      {"api_error", 8},
      {"sanitizer"},
  };
  return t;
}

const std::vector<std::string>& known_symptoms() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& s : symptom_table()) out.push_back(s.name);
    return out;
  }();
  return names;
}

const std::vector<std::string>& symptom_priority() {
  static const std::vector<std::string> order = [] {
    std::vector<SymptomTraits> ranked;
    for (const auto& s : symptom_table())
      if (s.rank > 0) ranked.push_back(s);
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    std::vector<std::string> out;
    for (const auto& s : ranked) out.push_back(s.name);
    return out;
  }();
  return order;
}

}  // namespace grader
