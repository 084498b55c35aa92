#include "string_literals.hpp"

#include <gtest/gtest.h>

using memlabs::without_string_contents;

TEST(StringLiterals, EachLiteralKeepsItsQuotesAndLosesItsText) {
  EXPECT_EQ(without_string_contents(R"({"a": "[[[", "b": [1]})"), R"({"": "", "": [1]})");
  EXPECT_EQ(without_string_contents(R"(.string "use .include" # note)"), R"(.string "" # note)");
}

TEST(StringLiterals, AnEscapedQuoteDoesNotEndTheLiteral) {
  EXPECT_EQ(without_string_contents(R"(x "a\"b{" y)"), R"(x "" y)");
  EXPECT_EQ(without_string_contents(R"("a\\" [)"), R"("" [)");
}

TEST(StringLiterals, AnUnterminatedLiteralRunsToTheEnd) {
  EXPECT_EQ(without_string_contents(R"(.incbin "f)"), R"(.incbin ")");
}
