// HMAC-SHA-256 (RFC 2104 over FIPS 180-4): a result file signed with a key the
// submission cannot read proves the grader wrote it (result_signature.hpp).
#pragma once

#include <string>

namespace grader {

// The tag of message under key, as 64 lowercase hex digits.
std::string hmac_sha256_hex(const std::string& key, const std::string& message);

// a == b in a time that does not depend on where they first differ.
bool same_text_constant_time(const std::string& a, const std::string& b);

}  // namespace grader
