// Content hashes for the build cache: a build is reused only when every input
// that could change its output (sources, headers, flags, compiler) is the same.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace grader {

// FNV-1a, 64 bits. Not cryptographic: the cache only needs to tell honest
// edits apart, and every cache entry is rebuilt from sources on demand.
class ContentHash {
 public:
  ContentHash& add(const std::string& bytes);
  ContentHash& add_file(const std::filesystem::path& file);  // name-independent: the content only
  // Every regular file under dir whose extension is listed, in sorted order, with its relative name.
  ContentHash& add_tree(const std::filesystem::path& dir, const std::vector<std::string>& extensions);
  std::string hex() const;

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace grader
