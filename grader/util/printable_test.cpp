#include "printable.hpp"

#include <gtest/gtest.h>

namespace grader {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

TEST(Printable, KeepsPlainTextUtf8AndLineStructure) {
  EXPECT_EQ(printable("kernel.cu:3:2: error: #error caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80\n\tnext"),
            "kernel.cu:3:2: error: #error caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9F\x98\x80\n\tnext");
  EXPECT_EQ(printable("one\r\ntwo\r\n"), "one\ntwo\n");
  EXPECT_EQ(printable("a typed \\x1b stays"), "a typed \\x1b stays");
}

// The row of `grader batch` that an #error once rewrote: erase the line, go to
// its start, print a verdict.
TEST(Printable, ShowsEscAndCsiSequencesAsText) {
  EXPECT_EQ(printable("\x1b[2K\x1b[1G10/10 points (all steps pass)"), "\\x1b[2K\\x1b[1G10/10 points (all steps pass)");
  EXPECT_EQ(printable("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
  EXPECT_EQ(printable("back\rover"), "back\\x0dover");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("\x08\x0b\x0c"), "\\x08\\x0b\\x0c");
}

TEST(Printable, ShowsNulAsText) { EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b"); }

// U+009B is CSI on its own, as two bytes of valid UTF-8.
TEST(Printable, ShowsC1ControlsAsCodePoints) {
  EXPECT_EQ(printable(std::string("\xC2\x9B") + "2K"), "\\u009b2K");
  EXPECT_EQ(printable("\xC2\x80\xC2\x9F\xC2\xA0"), "\\u0080\\u009f\xC2\xA0");  // U+00A0 is printable
}

TEST(Printable, ShowsBidiOverridesAndLineSeparatorsAsCodePoints) {
  EXPECT_EQ(printable(std::string("pass \xE2\x80\xAE") + "liaf"), "pass \\u202eliaf");
  EXPECT_EQ(printable("\xE2\x81\xA6x\xE2\x81\xA9"), "\\u2066x\\u2069");
  EXPECT_EQ(printable(std::string("a\xE2\x80\xA8") + "b"), "a\\u2028b");
}

TEST(Printable, ReplacesInvalidUtf8) {
  EXPECT_EQ(printable("red\xFF end"), "red" + kReplacement + " end");
  EXPECT_EQ(printable("\x80"), kReplacement);                                        // a stray continuation byte
  EXPECT_EQ(printable("\xE2\x82"), kReplacement + kReplacement);                     // cut short
  EXPECT_EQ(printable("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement);  // a surrogate
  EXPECT_EQ(printable("\xF4\x90\x80\x80"), kReplacement + kReplacement + kReplacement + kReplacement);  // > U+10FFFF
}

// An overlong form can hide a control (or a slash) from a check that reads bytes.
TEST(Printable, ReplacesOverlongEncodings) {
  EXPECT_EQ(printable("\xC0\xAF"), kReplacement + kReplacement);                     // '/' in two bytes
  EXPECT_EQ(printable("\xC1\x9B"), kReplacement + kReplacement);                     // ESC-like in two bytes
  EXPECT_EQ(printable("\xE0\x80\x9B"), kReplacement + kReplacement + kReplacement);  // in three
  EXPECT_EQ(printable("\xC0\x80"), kReplacement + kReplacement);                     // NUL in two bytes
}

// What a compiler quoted from a binary (#line 2 "/proc/self/exe") comes out as valid UTF-8 with no controls.
TEST(Printable, OutputOfAnyBytesIsValidUtf8WithoutControls) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  const std::string out = printable(all + all);
  for (const char c : out) {
    const unsigned char u = static_cast<unsigned char>(c);
    EXPECT_TRUE(u >= 0x20 || c == '\n' || c == '\t') << "control " << static_cast<int>(u);
    EXPECT_NE(u, 0x7F);
  }
  EXPECT_EQ(printable(out), out) << "printable text is printable";
}

}  // namespace
}  // namespace grader
