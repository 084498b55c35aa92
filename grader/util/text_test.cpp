#include "text.hpp"

#include <gtest/gtest.h>

namespace grader {
namespace {

TEST(Text, ListsItemsAsASentenceSays) {
  EXPECT_EQ(in_a_sentence({}), "");
  EXPECT_EQ(in_a_sentence({"memcheck"}), "memcheck");
  EXPECT_EQ(in_a_sentence({"memcheck", "racecheck"}), "memcheck and racecheck");
  EXPECT_EQ(in_a_sentence({"a", "b", "c", "d"}), "a, b, c and d");
  EXPECT_EQ(listed_code({"bar.sync", "ld.shared"}), "`bar.sync` and `ld.shared`");
}

TEST(Text, PlainNumberIsAsShortAsTheNumberAllows) {
  EXPECT_EQ(plain_number(2.5), "2.5");
  EXPECT_EQ(plain_number(50), "50");
  EXPECT_EQ(plain_number(0.05), "0.05");
  EXPECT_EQ(plain_number(1.23456), "1.2346");
}

}  // namespace
}  // namespace grader
