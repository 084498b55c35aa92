// The small string and file helpers every part of the grader uses, defined
// once: a file of its own would otherwise grow its own trim() and join().
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace grader {

// Without the blanks (space, tab, CR, LF) at either end.
std::string trim(std::string_view s);
// "a, b, c" for join({"a", "b", "c"}, ", "); every item counts, empty ones too.
std::string join(const std::vector<std::string>& items, const std::string& sep);
std::string lower(std::string s);
bool starts_with(std::string_view s, std::string_view prefix);
// A number with `precision` digits after the point: fixed(2.5, 2) == "2.50".
std::string fixed(double v, int precision = 2);
// As short as the number allows, at most 4 digits after the point: 2.5 -> "2.5", 50 -> "50".
std::string plain_number(double v);
// Items in a sentence: "a", "a and b", "a, b and c".
std::string in_a_sentence(const std::vector<std::string>& items);
// The same, each as Markdown code: "`a`, `b` and `c`".
std::string listed_code(const std::vector<std::string>& items);
// The text up to its first line break, without trailing blanks.
std::string first_line(std::string_view s);
// A file's bytes; nothing when it cannot be opened.
std::optional<std::string> read_file(const std::filesystem::path& p);

// The clock now in UTC, as strftime writes it with `format` ("%Y-%m-%dT%H:%M:%SZ").
std::string utc_now(const char* format);
// Length of the well-formed UTF-8 sequence at s[i] (1 for ASCII), or 0: no
// overlong forms, no surrogates, nothing past U+10FFFF, nothing cut short.
std::size_t utf8_sequence_length(const std::string& s, std::size_t i);

}  // namespace grader
