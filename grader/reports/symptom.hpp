// What a failing check can say it measured (its symptom), written once: every
// name a check may report, which family reports it, and, for those that
// explain others, which comes first when several checks of a step fail.
#pragma once

#include <string>
#include <vector>

namespace grader {

struct SymptomTraits {
  std::string name;  // as a check result and lab.json's symptom_hints name it: "race"
  // When several checks of a step fail, the lowest rank chooses the hint: the
  // symptom closest to the cause (a race explains a mismatch, not the other
  // way round). 0: below every ranked symptom.
  int rank = 0;
};

// Every symptom, in the order lint messages list them.
const std::vector<SymptomTraits>& symptom_table();

// Symptoms a failing check can report (docs/json-output.md, and the referee's
// outcome categories a correctness check passes on).
const std::vector<std::string>& known_symptoms();

// The ranked symptoms, closest to the cause first.
const std::vector<std::string>& symptom_priority();

}  // namespace grader
