#include "hmac.hpp"

#include <cstdint>

#include "sha256.hpp"

namespace grader {
namespace {

constexpr std::size_t kBlock = 64;  // SHA-256's block size in bytes

std::string bytes_of_hex(const std::string& hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  return out;
}

}  // namespace

std::string hmac_sha256_hex(const std::string& key, const std::string& message) {
  std::string k = key.size() > kBlock ? bytes_of_hex(sha256_hex(key)) : key;
  k.resize(kBlock, '\0');
  std::string inner(kBlock, '\0'), outer(kBlock, '\0');
  for (std::size_t i = 0; i < kBlock; ++i) {
    inner[i] = static_cast<char>(k[i] ^ 0x36);
    outer[i] = static_cast<char>(k[i] ^ 0x5c);
  }
  const std::string inner_digest = bytes_of_hex(sha256_hex(inner + message));
  return sha256_hex(outer + inner_digest);
}

bool same_text_constant_time(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace grader
