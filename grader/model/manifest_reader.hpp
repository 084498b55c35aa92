// What the manifest's readers share (manifest.cpp reads the file, its top
// level and its steps; manifest_checks.cpp each kind of check): the Reader,
// which turns a wrong value into an error naming where it is and what was
// expected, and the pieces of those messages. Private to those files.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "manifest.hpp"

namespace grader::manifest_detail {

using nlohmann::json;

// Empty when nothing is close enough for the suggestion to help rather than confuse.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);
std::string quote(const std::string& s);

// A value's place in the manifest, as messages name it: "steps[0].checks".
std::string at(const std::string& path, const std::string& key);
std::string at(const std::string& path, std::size_t index);

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const;
  void expect(bool ok, const std::string& path, const std::string& expected, const json& got) const;
  void reject_unknown_keys(const json& obj, const std::string& path, const std::vector<std::string>& known,
                           const std::string& what) const;
  const json& required(const json& obj, const std::string& path, const std::string& key,
                       const std::string& expected) const;
  static const json* optional(const json& obj, const std::string& key);

  int integer(const json& v, const std::string& path, std::int64_t lo, std::int64_t hi,
              const std::string& expected) const;
  // Values in (lo, hi]: every numeric threshold in format 1 has that shape.
  double number(const json& v, const std::string& path, double lo, double hi, const std::string& expected) const;
  std::string text(const json& v, const std::string& path) const;
  std::vector<std::string> text_list(const json& v, const std::string& path) const;
  std::map<std::string, std::string> text_map(const json& v, const std::string& path) const;

 private:
  std::string source_;
};

// One check of a step, of any kind (manifest_checks.cpp).
Check read_check(const Reader& r, const json& v, const std::string& path);

}  // namespace grader::manifest_detail
