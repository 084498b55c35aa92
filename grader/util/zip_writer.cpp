#include "zip_writer.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace grader {
namespace {

void put16(std::string& out, std::uint32_t v) {
  out += static_cast<char>(v & 0xFF);
  out += static_cast<char>((v >> 8) & 0xFF);
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

void check_name(const std::string& name) {
  const bool bad = name.empty() || name.front() == '/' || name.find('\\') != std::string::npos || name == ".." ||
                   name.rfind("../", 0) == 0 || name.find("/../") != std::string::npos ||
                   (name.size() >= 3 && name.compare(name.size() - 3, 3, "/..") == 0);
  if (bad) throw std::invalid_argument("not a relative path for a zip entry: \"" + name + "\"");
}

// 1980-01-01 00:00 in MS-DOS time: a fixed date, so the same files make the same archive.
constexpr std::uint32_t kDosTime = 0, kDosDate = (0u << 9) | (1u << 5) | 1u;

}  // namespace

std::uint32_t crc32(const std::string& bytes) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string zip_archive(const std::vector<ZipEntry>& entries) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
  if (entries.size() > 0xFFFF) throw std::invalid_argument("too many entries for a plain zip");
  std::string out, central;
  for (const auto& e : entries) {
    check_name(e.name);
    if (e.content.size() >= kMax || out.size() >= kMax || e.name.size() > 0xFFFF)
      throw std::invalid_argument("too large for a plain zip: " + e.name);
    const std::uint32_t crc = crc32(e.content), size = static_cast<std::uint32_t>(e.content.size());
    const std::uint32_t offset = static_cast<std::uint32_t>(out.size());
    // Local file header: version 2.0, no flags, stored.
    put32(out, 0x04034b50);
    put16(out, 20);
    put16(out, 0);
    put16(out, 0);
    put16(out, kDosTime);
    put16(out, kDosDate);
    put32(out, crc);
    put32(out, size);
    put32(out, size);
    put16(out, static_cast<std::uint32_t>(e.name.size()));
    put16(out, 0);
    out += e.name;
    out += e.content;
    // Its central directory record: made by Unix (3), the mode in the external attributes.
    put32(central, 0x02014b50);
    put16(central, (3u << 8) | 20);
    put16(central, 20);
    put16(central, 0);
    put16(central, 0);
    put16(central, kDosTime);
    put16(central, kDosDate);
    put32(central, crc);
    put32(central, size);
    put32(central, size);
    put16(central, static_cast<std::uint32_t>(e.name.size()));
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put32(central, (static_cast<std::uint32_t>(S_IFREG | (e.mode & 07777))) << 16);
    put32(central, offset);
    central += e.name;
  }
  if (out.size() + central.size() >= kMax) throw std::invalid_argument("too large for a plain zip");
  const std::uint32_t central_offset = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put32(out, static_cast<std::uint32_t>(central.size()));
  put32(out, central_offset);
  put16(out, 0);
  return out;
}

std::vector<ZipEntry> zip_entries_of(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::vector<ZipEntry> out;
  for (const auto& it : fs::recursive_directory_iterator(dir)) {
    if (!it.is_regular_file() || it.is_symlink()) continue;
    ZipEntry e;
    e.name = fs::relative(it.path(), dir).generic_string();
    std::ifstream in(it.path(), std::ios::binary);
    e.content.assign(std::istreambuf_iterator<char>(in), {});
    e.mode = static_cast<std::uint32_t>(fs::status(it.path()).permissions()) & 0777;
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const ZipEntry& a, const ZipEntry& b) { return a.name < b.name; });
  return out;
}

}  // namespace grader
