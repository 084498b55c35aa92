// How far apart two words are, for "did you mean ...?" suggestions (an
// unknown lab name, a misspelt manifest key).
#pragma once

#include <cstddef>
#include <string>

namespace grader {

// Optimal string alignment distance: a swapped pair of letters, the commonest
// typo, counts as one edit.
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace grader
