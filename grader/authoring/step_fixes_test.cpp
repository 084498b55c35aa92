#include "step_fixes.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace grader {
namespace {

// The examples are made up: this file is published with the grader, so it
// must hold no lab's answer (publish scans it like every other file).

// Two markers on adjacent lines, one hunk filling both (lab07's shape).
const std::string kSmoothSkeleton =
    "__global__ void smooth(float* dst, const float* src) {\n"
    "  // TODO(step 2): widen `cache` by two entries (~1 line)\n"
    "  // TODO(step 1): stage src in `cache`, __syncthreads(), average three neighbours (~4 lines)\n"
    "  dst[threadIdx.x] = src[threadIdx.x];\n"
    "}\n";
const std::string kSmoothSolution =
    "__global__ void smooth(float* dst, const float* src) {\n"
    "  // Two spare entries: the neighbours of the first and the last thread.\n"
    "  __shared__ float cache[LANES + 2];\n"
    "  cache[threadIdx.x + 1] = src[threadIdx.x];\n"
    "  __syncthreads();\n"
    "  dst[threadIdx.x] = (cache[threadIdx.x] + cache[threadIdx.x + 1] + cache[threadIdx.x + 2]) / 3.0f;\n"
    "}\n";

// A fix long enough to be recognised renamed (lab09's driver held its step 1 that way).
const std::string kClampSkeleton =
    "__global__ void clamp(float* ys, const float* xs, int count, float limit) {\n"
    "  const int first = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  // TODO(step 1): clamp every element to [-limit, limit] in a grid-stride loop (~5 lines)\n"
    "  if (first < count) ys[first] = xs[first];\n"
    "}\n";
const std::string kClampAnswer =
    "  const int stride = gridDim.x * blockDim.x;  // the whole grid\n"
    "  for (int j = first; j < count; j += stride) {\n"
    "    const float v = xs[j];\n"
    "    ys[j] = v > limit ? limit : (v < -limit ? -limit : v);\n"
    "  }\n";
std::string clamp_solution() {
  std::string s = kClampSkeleton;
  const std::string old =
      "  // TODO(step 1): clamp every element to [-limit, limit] in a grid-stride loop (~5 lines)\n"
      "  if (first < count) ys[first] = xs[first];\n";
  return s.replace(s.find(old), old.size(), kClampAnswer);
}

std::string renamed(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t p = 0; (p = text.find(from, p)) != std::string::npos; p += to.size())
    text.replace(p, from.size(), to);
  return text;
}

TEST(StepFixes, AdjacentMarkersAreOneFixCreditedToBothSteps) {
  const auto fixes = step_fixes(kSmoothSkeleton, kSmoothSolution);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].steps, (std::vector<int>{2, 1}));
  EXPECT_EQ(fixes[0].skeleton_line, 2);
  EXPECT_EQ(describe(fixes[0]),
            "steps 2 and 1's fix (the solution's code for the TODO region at line 2 of the skeleton)");
  // The comment is not part of the fix; every changed line is.
  EXPECT_EQ(fixes[0].tokens.front(), "__shared__");
  EXPECT_EQ(fixes[0].tokens.back(), ";");
  EXPECT_EQ(fixes[0].new_lines.size(), 4u);
}

TEST(StepFixes, TokensIgnoreWhitespaceAndCodeComments) {
  EXPECT_EQ(code_tokens("cache[LANES+2];", true), code_tokens("cache [ LANES\n+ 2 ] ;", true));
  EXPECT_EQ(code_tokens("x = 0.0f; // set\n/* gone */ y", true),
            (std::vector<std::string>{"x", "=", "0.0f", ";", "y"}));
  EXPECT_EQ(code_tokens("s = \"http://a\";", true).size(), 10u);  // a string is not a comment
  EXPECT_EQ(code_tokens("see http://a", false).size(), 6u);       // nor is a lesson's URL
}

TEST(StepFixes, AFreeHintThatStatesOneLineOfTheFixIsCaught) {
  const auto fix = step_fixes(kSmoothSkeleton, kSmoothSolution).at(0);
  // lab07's old free hint did this: the answer's one line, at the end of a sentence.
  EXPECT_TRUE(hint_states_fix("Widen the cache by two: __shared__ float cache[LANES + 2];", fix));
  EXPECT_TRUE(hint_states_fix("write `cache[threadIdx.x + 1]   =   src[threadIdx.x];`", fix));
  // Pointing at the fix without stating it.
  EXPECT_FALSE(
      hint_states_fix("The first and the last thread read past the cache: give it room for their neighbours.", fix));
  // A line this short names a tool, not the answer.
  EXPECT_FALSE(hint_states_fix("a missing __syncthreads(); between the phases", fix));
}

TEST(StepFixes, AFileHoldingTheWholeFixIsCaughtEvenRenamed) {
  const auto fixes = step_fixes(kClampSkeleton, clamp_solution());
  ASSERT_EQ(fixes.size(), 1u);
  ASSERT_GE(fixes[0].tokens.size(), kRenamedFixMinTokens);
  const std::string driver = "__global__ void plain(float* out, const float* in, int count, float bound) {\n" +
                             renamed(renamed(renamed(kClampAnswer, "ys", "out"), "xs", "in"), "limit", "bound") + "}\n";
  EXPECT_TRUE(holds_fix(code_tokens(driver, true), fixes[0]));
  // A plainer version shares part of it, not all of it.
  const std::string plain =
      "  const int stride = gridDim.x * blockDim.x;\n"
      "  for (int j = first; j < count; j += stride) out[j] = fminf(fmaxf(in[j], -bound), bound);\n";
  EXPECT_FALSE(holds_fix(code_tokens(plain, true), fixes[0]));
  // A rename must be one to one: two names of the fix cannot become one.
  EXPECT_FALSE(holds_fix(code_tokens(renamed(kClampAnswer, "ys", "xs"), true), fixes[0]));
}

TEST(StepFixes, AShortFixIsCaughtOnlyTokenForToken) {
  // A one-line answer, which renamed is any constant array (lab04's shape).
  const auto fixes =
      step_fixes("// TODO(step 1): keep the gains in constant memory (~1 line)\nfloat* gains = nullptr;\n",
                 "__constant__ float c_gain[CHANNELS];\n");
  ASSERT_EQ(fixes.size(), 1u);
  ASSERT_LT(fixes[0].tokens.size(), kRenamedFixMinTokens);
  EXPECT_TRUE(holds_fix(code_tokens("__constant__  float c_gain[ CHANNELS ];", true), fixes[0]));
  EXPECT_FALSE(holds_fix(code_tokens("__constant__ float table[N];", true), fixes[0]));
}

TEST(StepFixes, ALabJsonIsReadWithoutItsPaidHints) {
  const nlohmann::json lab = {{"title", "t"},
                              {"steps",
                               {{{"id", 3},
                                 {"hints", {"paid: __shared__ float cache[LANES + 2];"}},
                                 {"symptom_hints", {{"bank_conflicts", "free: pad the tile"}}}}}}};
  const auto tokens = free_text_tokens("labs/lab07-x/lab.json", lab.dump());
  const auto has = [&](const std::string& word) {
    return std::find(tokens.begin(), tokens.end(), word) != tokens.end();
  };
  EXPECT_TRUE(has("t"));
  EXPECT_FALSE(has("paid"));
  EXPECT_FALSE(has("free"));  // a free hint is checked as a hint, by name
  // Any other file is read whole.
  EXPECT_NE(free_text_tokens("labs/lab07-x/notes.json", lab.dump()).size(), tokens.size());
}

TEST(StepFixes, FindGivenFixesNamesTheFileOrHintAndTheStep) {
  const auto fixes = step_fixes(kSmoothSkeleton, kSmoothSolution);
  const std::vector<FreeHint> hints = {
      {"the free symptom hint \"out_of_bounds\" of step 2", "widen it: __shared__ float cache[LANES + 2];"},
      {"the free symptom hint \"race\" of step 1", "add a barrier"}};
  const auto found =
      find_given_fixes({{"labs/lab01-x/kernel.cu", kSmoothSkeleton}, {"labs/lab01-x/scratch.cu", kSmoothSolution}},
                       {{"solutions/lab01-x/kernel.cu", fixes, hints}});
  const std::string what = "steps 2 and 1's fix (the solution's code for the TODO region at line 2 of the skeleton)";
  EXPECT_EQ(found,
            (std::vector<std::string>{"labs/lab01-x/scratch.cu holds " + what + " of solutions/lab01-x/kernel.cu",
                                      "the free symptom hint \"out_of_bounds\" of step 2 states " + what +
                                          " of solutions/lab01-x/kernel.cu"}));
}

}  // namespace
}  // namespace grader
