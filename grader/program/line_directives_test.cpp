// Which files a kernel.cu may say its lines come from: its #line directives as
// the preprocessor reads them, and its preprocessed code's line markers.
#include "line_directives.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace grader {
namespace {

namespace fs = std::filesystem;

// A build folder as builder_kernel.cpp makes it: work/src/{kernel.cu, lab/, common/lab/}.
class Staged : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = fs::temp_directory_path() / ("line-directives-" + std::to_string(::getpid()));
    fs::create_directories(work_ / "src" / "lab");
    fs::create_directories(work_ / "src" / "common" / "lab");
    for (const char* f : {"src/kernel.cu", "src/lab/lab.cuh", "src/common/lab/check.cuh"})
      std::ofstream(work_ / f) << "\n";
  }
  void TearDown() override { fs::remove_all(work_); }
  PublicFiles files() const { return PublicFiles(work_ / "src", work_, {"/usr/include"}); }
  std::string refusal(const std::string& source) const { return foreign_line_directive(source, files()); }

  fs::path work_;
};

TEST_F(Staged, KernelCuItsHeadersTheSystemsAndTheCompilersOwnNamesArePublic) {
  const PublicFiles f = files();
  for (const std::string& name :
       std::vector<std::string>{"kernel.cu", "lab.cuh", "common/lab/check.cuh", "<built-in>", "<command-line>",
                                "/usr/include/stdio.h", (work_ / "src" / "kernel.cu").string(), "src/kernel.cu",
                                (work_ / "keep" / "kernel.cudafe1.stub.c").string()})
    EXPECT_TRUE(f.contains(name)) << name;
}

TEST_F(Staged, EveryOtherFileIsNot) {
  const PublicFiles f = files();
  for (const std::string& name :
       std::vector<std::string>{"/proc/self/exe", "/course/solutions/lab07-bank-conflicts/kernel.cu", "../x.cu",
                                "/usr/include/../../etc/passwd", "lab/../../../etc/passwd", "",
                                "<built-in>/../../../etc/passwd", (work_ / "src" / ".." / ".." / "x").string()})
    EXPECT_FALSE(f.contains(name)) << name;
}

TEST_F(Staged, HonestCodeAndItsOwnNamesPass) {
  EXPECT_EQ(refusal("#include \"lab.cuh\"\n#define N 4\n__global__ void k(float* o) { o[0] = N; }\n"), "");
  EXPECT_EQ(refusal("#line 10\n#line 20 \"kernel.cu\"\n# 30 \"lab.cuh\"\n"), "");
}

TEST_F(Staged, ALineDirectiveOrMarkerNamingAnotherFileIsRefusedByItsRuleAndLine) {
  const std::string why = refusal("int a;\n#line 2 \"/proc/self/exe\"\n#warning x\n");
  EXPECT_NE(why.find("#line directive on line 2"), std::string::npos) << why;
  EXPECT_EQ(why.find("/proc"), std::string::npos) << "the rule, never the name";
  EXPECT_NE(refusal("# 22 \"/course/solutions/lab07-bank-conflicts/kernel.cu\"\n"), "");
  EXPECT_NE(refusal("#line 22 \"../../../solutions/lab07-bank-conflicts/kernel.cu\"\n"), "");
}

// A macro can make the name (or the whole operand), an escape can spell it.
TEST_F(Staged, ANameMadeByAMacroOrSpelledWithEscapesIsRefused) {
  EXPECT_NE(refusal("#define F \"/proc/self/exe\"\n#line 2 F\n"), "");
  EXPECT_NE(refusal("#define L 2 \"/proc/self/exe\"\n#line L\n"), "");
  EXPECT_NE(refusal("#line 2 \"\\x2fproc\\x2fself\\x2fexe\"\n"), "");
  EXPECT_NE(refusal("#line 2 \"kernel.cu\" extra\n"), "");
}

// Every way the preprocessor still reads a directive (checked with GCC 12).
TEST_F(Staged, SplicesCommentsDigraphsAndCarriageReturnsDoNotHideADirective) {
  const std::string bad = " \"/proc/self/exe\"\n";
  EXPECT_NE(refusal("#li\\\nne 2" + bad), "") << "a backslash-newline";
  EXPECT_NE(refusal("#li\\  \nne 2" + bad), "") << "blanks between the backslash and the newline";
  EXPECT_NE(refusal("# /* c */ line 2" + bad), "") << "a comment after the #";
  EXPECT_NE(refusal("/* a\n */ #line 2" + bad), "") << "a comment before it, over lines";
  EXPECT_NE(refusal("%:line 2" + bad), "") << "a digraph";
  EXPECT_NE(refusal("int x;\r#line 2" + bad), "") << "a lone CR ends a line";
  EXPECT_NE(refusal("  \t#line 2" + bad), "") << "blanks before the #";
  EXPECT_NE(refusal("#line 2 /* c */" + bad), "") << "a comment before the name";
  EXPECT_NE(refusal("\xEF\xBB\xBF#line 2" + bad), "") << "a byte order mark before it";
  EXPECT_NE(refusal(std::string("int a;\n\0#line 2", 15) + bad), "") << "a NUL, which GCC ignores";
}

TEST_F(Staged, LiteralsAndCommentsHoldNoDirectives) {
  EXPECT_EQ(refusal("// #line 2 \"/proc/self/exe\"\nconst char* s = \"#line 2 \\\"/proc/self/exe\\\"\";\n"), "");
  EXPECT_EQ(refusal("/*\n#line 2 \"/proc/self/exe\"\n*/\n"), "");
  EXPECT_EQ(refusal("const char* r = R\"x(\n#line 2 \"/proc/self/exe\"\n)x\";\n"), "");
  EXPECT_EQ(refusal("int n = 1'000'000; char q = '\"';\n"), "");
  EXPECT_EQ(refusal("int a; # line 2 \"/proc/self/exe\"\n"), "") << "not first on its line: no directive";
}

// What a scanner that took these for comments or raw strings would miss.
TEST_F(Staged, WhatLooksLikeACommentOrRawStringButIsNotHidesNothing) {
  const std::string bad = "#line 2 \"/proc/self/exe\"\n";
  EXPECT_NE(refusal("const char* s = \"/*\";\n" + bad + "// */\n"), "") << "a /* in a string";
  EXPECT_NE(refusal("char c = '\"'; /* x */\n" + bad), "") << "a quote in a character literal";
  EXPECT_NE(refusal("int xR = 0; const char* s = xR\"(\";\n" + bad + "// )\"\n"), "") << "xR is no raw prefix";
  EXPECT_NE(refusal("float f = 1.R\"(\";\n" + bad + "// )\"\n"), "") << "1.R is a number";
  // Between a raw string's quotes the splices are undone: its end is )x" in the source.
  EXPECT_NE(refusal("const char* r = R\"x( )\\\nx\" /* )x\";\n" + bad + "// */\n"), "");
}

TEST_F(Staged, DirectivesAreFoundWithTheirLines) {
  const auto d = preprocessing_directives("#include \"a\"\nint x;\n#li\\\nne 9\n  %:  define X 1 /* c */\n");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].line, 1u);
  EXPECT_EQ(d[1].line, 3u);
  EXPECT_EQ(d[1].text, "line 9");
  EXPECT_EQ(d[2].line, 5u);
  EXPECT_EQ(d[2].text, "  define X 1  ");
}

TEST_F(Staged, PreprocessedCodeMayComeOnlyFromPublicFiles) {
  const std::string own = "# 0 \"" + (work_ / "src" / "kernel.cu").string() + "\"\n# 0 \"<built-in>\"\n" +
                          "# 1 \"/usr/include/stdio.h\" 1 3 4\n#line 5 \"" +
                          (work_ / "src" / "lab" / "lab.cuh").string() + "\"\nint x;\n";
  EXPECT_EQ(foreign_line_marker(own, files()), "");
  EXPECT_NE(foreign_line_marker(own + "# 2 \"/proc/self/exe\"\n", files()), "");
  EXPECT_NE(foreign_line_marker(own + "#line 22 \"/course/solutions/lab07/kernel.cu\"\n", files()), "");
  // GCC writes a name's odd bytes as octal escapes: "\057" is "/".
  EXPECT_NE(foreign_line_marker(own + "# 2 \"\\057proc\\057self\\057exe\"\n", files()), "");
  EXPECT_EQ(foreign_line_marker("int y; // # 2 \"/proc/self/exe\"\n", files()), "") << "a marker starts its line";
}

}  // namespace
}  // namespace grader
