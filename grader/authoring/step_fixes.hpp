// What each step's fix looks like, so that nothing a student gets for free
// hands it out: no published file (a driver's baseline, a lesson, a
// near-solution left in kernel.cu) and no free hint (the symptom hints a
// failing check shows without cost; the paid `hints` ladder may show code).
//
// A fix is the code the solution puts in one TODO region of the skeleton.
// Markers on adjacent lines form one region: a line diff cannot tell which
// of their lines belongs to which (lab07 pads the tile right above the code
// that stages it), so the fix is credited to all of their steps.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "manifest.hpp"

namespace grader {

struct StepFix {
  std::vector<int> steps;  // the steps whose markers head the region
  int skeleton_line = 0;   // 1-based line of its first marker
  // The solution's code from the first to the last line it changed there,
  // comments dropped: all of it as tokens, and each line the skeleton does not
  // already have, as tokens.
  std::vector<std::string> tokens;
  std::vector<std::vector<std::string>> new_lines;
};

std::vector<StepFix> step_fixes(const std::string& skeleton, const std::string& solution);

// "step 3's fix (the TODO region at kernel.cu line 7)"; "steps 3 and 1's fix (...)".
std::string describe(const StepFix& fix);

// C-like tokens: each identifier, number and punctuation character; no
// whitespace, so a re-indented or re-wrapped copy has the same tokens. With
// `is_code`, comments are dropped too (a lesson's "//" is a URL, not a comment).
std::vector<std::string> code_tokens(const std::string& text, bool is_code);
bool is_code_file(const std::string& path);

// A fix this long renamed consistently (c_weights everywhere called
// baseline_weights, say) is still the fix: lab09's driver held step 1's answer
// that way. A shorter one renamed is common code (`__constant__ float w[N];`).
inline constexpr std::size_t kRenamedFixMinTokens = 40;
// A line of a fix this long in a free hint hands out that line: lab07's free
// hint for bank conflicts ended with the one line of step 3's answer. Shorter
// ones name a tool (`#pragma unroll`, `__syncthreads();`), not an answer.
inline constexpr std::size_t kHintLineMinTokens = 8;

// Whether `text` (a file's tokens) holds the whole fix: token for token or,
// from kRenamedFixMinTokens on, with its identifiers renamed one to one.
bool holds_fix(const std::vector<std::string>& text, const StepFix& fix);
// Whether a free hint holds the whole fix, or one of its new lines of at
// least kHintLineMinTokens tokens, token for token.
bool hint_states_fix(const std::string& hint, const StepFix& fix);

// The hints a failing check shows without cost: the lab's symptom hints (the
// course's shared ones among them) and each step's. `where` names one:
// "the free symptom hint \"bank_conflicts\" of step 3".
struct FreeHint {
  std::string where, text;
};
std::vector<FreeHint> free_hints(const Manifest& manifest);

// A published file's text as tokens, as a student reads it for free: a
// lab.json without its paid hints (steps[].hints), whose code may show a fix,
// and without its symptom hints (as labs/symptom_hints.json), which are
// checked one by one as free hints.
std::vector<std::string> free_text_tokens(const std::string& path, const std::string& content);

// One lab's solution as publish and the lint check for it: its fixes, and
// the free hints its students are shown (the lab's).
struct FixSource {
  std::string solution_name;  // "solutions/lab07-bank-conflicts/kernel.cu"
  std::vector<StepFix> fixes;
  std::vector<FreeHint> hints;
};
// "PATH holds step N's fix (...) of SOLUTION" for every file (path, content)
// that holds a fix of any source, and "WHERE states ..." for every free hint
// that states a fix of its own lab.
std::vector<std::string> find_given_fixes(const std::vector<std::pair<std::string, std::string>>& files,
                                          const std::vector<FixSource>& sources);

}  // namespace grader
