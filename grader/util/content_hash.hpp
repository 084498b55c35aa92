// Content hashes for the build cache: a build is reused only when every input
// that could change its output (sources, headers, flags, compiler) is the same.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sha256.hpp"

namespace grader {

// SHA-256 of every item with its length, shown as 128 bits. Cryptographic on
// purpose: a submission is compiled under a key of its own bytes, and a key
// anyone could collide would let one submission be handed another's build.
class ContentHash {
 public:
  ContentHash& add(const std::string& bytes);
  ContentHash& add_file(const std::filesystem::path& file);  // name-independent: the content only
  // Every regular file under dir whose extension is listed, in sorted order, with its relative name.
  ContentHash& add_tree(const std::filesystem::path& dir, const std::vector<std::string>& extensions);
  std::string hex() const;

 private:
  Sha256 h_;
};

}  // namespace grader
