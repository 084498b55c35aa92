#include "step_fixes.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace grader {
namespace {

// lab07's shape: two markers on adjacent lines, one hunk filling both.
const std::string kTransposeSkeleton =
    "__global__ void transpose(float* out, const float* in) {\n"
    "  // TODO(step 3): pad `tile` by one column (~1 line)\n"
    "  // TODO(step 1): stage the tile, __syncthreads(), write it transposed (~4 lines)\n"
    "  out[threadIdx.x] = in[threadIdx.x];\n"
    "}\n";
const std::string kTransposeSolution =
    "__global__ void transpose(float* out, const float* in) {\n"
    "  // One spare column: a column of the tile spans 32 banks.\n"
    "  __shared__ float tile[TILE_DIM][TILE_DIM + 1];\n"
    "  tile[threadIdx.y][threadIdx.x] = in[threadIdx.x];\n"
    "  __syncthreads();\n"
    "  out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n"
    "}\n";

// lab09's shape: step 1's answer is long enough to be recognised renamed.
const std::string kStencilSkeleton =
    "template <int R>\n"
    "__global__ void stencil_1d(float* out, const float* in, int n) {\n"
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  // TODO(step 1): add the 2R neighbours (~8 lines)\n"
    "  out[i] = c_weights[R] * in[i];\n"
    "}\n";
const std::string kStencilAnswer =
    "  float sum = 0.0f;\n"
    "  if (i >= R && i + R < n) {  // the whole window inside\n"
    "#pragma unroll\n"
    "    for (int k = -R; k <= R; ++k) sum += c_weights[k + R] * in[i + k];\n"
    "  } else {\n"
    "#pragma unroll\n"
    "    for (int k = -R; k <= R; ++k)\n"
    "      if (i + k >= 0 && i + k < n) sum += c_weights[k + R] * in[i + k];\n"
    "  }\n"
    "  out[i] = sum;\n";
std::string stencil_solution() {
  std::string s = kStencilSkeleton;
  const std::string old = "  // TODO(step 1): add the 2R neighbours (~8 lines)\n  out[i] = c_weights[R] * in[i];\n";
  return s.replace(s.find(old), old.size(), kStencilAnswer);
}

TEST(StepFixes, AdjacentMarkersAreOneFixCreditedToBothSteps) {
  const auto fixes = step_fixes(kTransposeSkeleton, kTransposeSolution);
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_EQ(fixes[0].steps, (std::vector<int>{3, 1}));
  EXPECT_EQ(fixes[0].skeleton_line, 2);
  EXPECT_EQ(describe(fixes[0]),
            "steps 3 and 1's fix (the solution's code for the TODO region at line 2 of the skeleton)");
  // The comment is not part of the fix; every changed line is.
  EXPECT_EQ(fixes[0].tokens.front(), "__shared__");
  EXPECT_EQ(fixes[0].tokens.back(), ";");
  EXPECT_EQ(fixes[0].new_lines.size(), 4u);
}

TEST(StepFixes, TokensIgnoreWhitespaceAndCodeComments) {
  EXPECT_EQ(code_tokens("tile[TILE_DIM][TILE_DIM+1];", true),
            code_tokens("tile [ TILE_DIM ]\n[TILE_DIM + 1 ] ;", true));
  EXPECT_EQ(code_tokens("x = 0.0f; // set\n/* gone */ y", true),
            (std::vector<std::string>{"x", "=", "0.0f", ";", "y"}));
  EXPECT_EQ(code_tokens("s = \"http://a\";", true).size(), 10u);  // a string is not a comment
  EXPECT_EQ(code_tokens("see http://a", false).size(), 6u);       // nor is a lesson's URL
}

TEST(StepFixes, AFreeHintThatStatesOneLineOfTheFixIsCaught) {
  const auto fix = step_fixes(kTransposeSkeleton, kTransposeSolution).at(0);
  // lab07's old free hint: the answer's one line, at the end of a sentence.
  EXPECT_TRUE(hint_states_fix("Pad the tile, 33 floats a row: __shared__ float tile[TILE_DIM][TILE_DIM + 1];", fix));
  EXPECT_TRUE(hint_states_fix("write `tile[threadIdx.y][threadIdx.x]   =   in[threadIdx.x];`", fix));
  // Pointing at the fix without stating it.
  EXPECT_FALSE(hint_states_fix(
      "Bank conflicts counted: a tile row of 32 floats puts a whole column in one bank. Change the tile's shape so "
      "that each row starts one bank further on.",
      fix));
  // A line this short names a tool, not the answer.
  EXPECT_FALSE(hint_states_fix("a missing __syncthreads(); between the phases", fix));
}

TEST(StepFixes, AFileHoldingTheWholeFixIsCaughtEvenRenamed) {
  const auto fixes = step_fixes(kStencilSkeleton, stencil_solution());
  ASSERT_EQ(fixes.size(), 1u);
  ASSERT_GE(fixes[0].tokens.size(), kRenamedFixMinTokens);
  std::string driver = kStencilAnswer;
  for (std::size_t p; (p = driver.find("c_weights")) != std::string::npos;) driver.replace(p, 9, "baseline_weights");
  driver = "__global__ void plain(float* out, const float* in, int n) {\n" + driver + "}\n";
  EXPECT_TRUE(holds_fix(code_tokens(driver, true), fixes[0]));
  // The plain version the lesson describes (a test on every tap) shares part of it, not all of it.
  const std::string naive =
      "  float sum = 0.0f;\n"
      "  for (int k = -R; k <= R; ++k)\n"
      "    if (i + k >= 0 && i + k < n) sum += baseline_weights[k + R] * in[i + k];\n"
      "  out[i] = sum;\n";
  EXPECT_FALSE(holds_fix(code_tokens(naive, true), fixes[0]));
  // A rename must be one to one: two names of the fix cannot become one.
  std::string merged = kStencilAnswer;
  for (std::size_t p; (p = merged.find("c_weights")) != std::string::npos;) merged.replace(p, 9, "in");
  EXPECT_FALSE(holds_fix(code_tokens(merged, true), fixes[0]));
}

TEST(StepFixes, AShortFixIsCaughtOnlyTokenForToken) {
  // lab04's shape: a one-line answer, which renamed is any constant array.
  const auto fixes = step_fixes("// TODO(step 1): declare c_coeffs in constant memory (~1 line)\nfloat* g = nullptr;\n",
                                "__constant__ float c_coeffs[POLY_TERMS];\n");
  ASSERT_EQ(fixes.size(), 1u);
  ASSERT_LT(fixes[0].tokens.size(), kRenamedFixMinTokens);
  EXPECT_TRUE(holds_fix(code_tokens("__constant__  float c_coeffs[ POLY_TERMS ];", true), fixes[0]));
  EXPECT_FALSE(holds_fix(code_tokens("__constant__ float baseline_weights[MAX_WEIGHTS];", true), fixes[0]));
}

TEST(StepFixes, ALabJsonIsReadWithoutItsPaidHints) {
  const nlohmann::json lab = {{"title", "t"},
                              {"steps",
                               {{{"id", 3},
                                 {"hints", {"paid: __shared__ float tile[TILE_DIM][TILE_DIM + 1];"}},
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
  const auto fixes = step_fixes(kTransposeSkeleton, kTransposeSolution);
  const std::vector<FreeHint> hints = {
      {"the free symptom hint \"bank_conflicts\" of step 3", "pad it: __shared__ float tile[TILE_DIM][TILE_DIM + 1];"},
      {"the free symptom hint \"race\" of step 1", "add a barrier"}};
  const auto found = find_given_fixes(
      {{"labs/lab07-x/kernel.cu", kTransposeSkeleton}, {"labs/lab07-x/scratch.cu", kTransposeSolution}},
      {{"solutions/lab07-x/kernel.cu", fixes, hints}});
  const std::string what = "steps 3 and 1's fix (the solution's code for the TODO region at line 2 of the skeleton)";
  EXPECT_EQ(found,
            (std::vector<std::string>{"labs/lab07-x/scratch.cu holds " + what + " of solutions/lab07-x/kernel.cu",
                                      "the free symptom hint \"bank_conflicts\" of step 3 states " + what +
                                          " of solutions/lab07-x/kernel.cu"}));
}

}  // namespace
}  // namespace grader
