// The sections `grader bench` writes into a measurement file
// (docs/measurements/<gpu>.md), one per lab, kept apart by markers:
//
//   <!-- bench:LAB -->
//   BODY
//   <!-- /bench:LAB -->
//
// cmd_bench writes them; lessons copy them (lesson_measurements.hpp). Both
// sides go through these two functions, so the format is written once.
#pragma once

#include <optional>
#include <string>

namespace grader {

// The body of `lab`'s section; nullopt when the file has none.
std::optional<std::string> bench_section(const std::string& file_text, const std::string& lab);
// The file with `lab`'s section replaced by `body` (or added at the end), the others kept.
std::string with_bench_section(std::string file_text, const std::string& lab, const std::string& body);

}  // namespace grader
