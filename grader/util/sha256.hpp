// SHA-256 (FIPS 180-4), for the published copy's manifest of protected files
// and the build cache's keys (content_hash.hpp): an edit must not be able to
// keep the same hash by accident or on purpose.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace grader {

class Sha256 {
 public:
  Sha256();
  Sha256& update(const void* data, std::size_t size);
  Sha256& update(const std::string& bytes) { return update(bytes.data(), bytes.size()); }
  // The digest as 64 lowercase hex digits. Finishes the hash: call once.
  std::string hex();

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes hashed so far
  bool finished_ = false;
};

std::string sha256_hex(const std::string& bytes);
// Throws std::runtime_error when the file cannot be read.
std::string sha256_file(const std::filesystem::path& file);

}  // namespace grader
