// JSON as the grader writes it, for a person or a program to read. The last
// line of defence for text a submission controls (printable.hpp is the first):
// a string that is not valid UTF-8 is written with U+FFFD where nlohmann's
// plain dump() would throw type_error.316, so no JSON report can fail because
// of what a compiler or a program printed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace grader {

// `j` as text, `indent` spaces per level (-1: on one line).
std::string json_text(const nlohmann::json& j, int indent = 2);

}  // namespace grader
