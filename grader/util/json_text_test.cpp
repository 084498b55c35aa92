#include "json_text.hpp"

#include <gtest/gtest.h>

namespace grader {
namespace {

// What `grader grade --json` once died of (exit 2, "type_error.316"): a
// diagnostic that quoted a line of a binary.
TEST(JsonText, WritesInvalidUtf8AsReplacementCharacters) {
  const nlohmann::json j = {{"diagnostics", "/proc/self/exe:2:2: warning:\n    2 | \177ELF\x02\x01\xff\xc0\xaf"}};
  EXPECT_THROW((void)j.dump(2), nlohmann::json::type_error);
  const std::string text = json_text(j);
  EXPECT_EQ(nlohmann::json::parse(text)["diagnostics"],
            "/proc/self/exe:2:2: warning:\n    2 | \177ELF\x02\x01\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(JsonText, IndentsAsAsked) {
  const nlohmann::json j = {{"a", 1}};
  EXPECT_EQ(json_text(j), "{\n  \"a\": 1\n}");
  EXPECT_EQ(json_text(j, -1), "{\"a\":1}");
}

}  // namespace
}  // namespace grader
