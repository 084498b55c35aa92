// The Reader of manifest_reader.hpp: typed reads of a manifest's JSON values
// that fail with the value's place, what was expected and, for an unknown
// key, the known key it most likely meant.
#include "manifest_reader.hpp"

#include <algorithm>
#include <cmath>

#include "edit_distance.hpp"
#include "text.hpp"

namespace grader::manifest_detail {
namespace {

// How a wrong value reads in a message: short, and in the author's own JSON terms.
std::string describe(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

bool is_comment_key(const std::string& key) { return !key.empty() && (key[0] == '_' || key[0] == '$'); }

}  // namespace

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::string best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

std::string quote(const std::string& s) { return json(s).dump(); }

std::string at(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string at(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

void Reader::fail(const std::string& path, const std::string& msg) const {
  throw ManifestError(source_ + ": " + (path.empty() ? "" : path + ": ") + msg);
}

void Reader::expect(bool ok, const std::string& path, const std::string& expected, const json& got) const {
  if (!ok) fail(path, "expected " + expected + ", got " + describe(got));
}

void Reader::reject_unknown_keys(const json& obj, const std::string& path, const std::vector<std::string>& known,
                                 const std::string& what) const {
  for (const auto& item : obj.items()) {
    const std::string& key = item.key();
    if (is_comment_key(key) || std::count(known.begin(), known.end(), key)) continue;
    std::string msg = "unknown key " + quote(key) + " in " + what;
    std::string guess = closest(key, known);
    if (!guess.empty())
      msg += " (did you mean " + quote(guess) + "?)";
    else
      msg += "; known keys: " + join(known, ", ") + " (keys starting with _ or $ are comments)";
    fail(path, msg);
  }
}

const json& Reader::required(const json& obj, const std::string& path, const std::string& key,
                             const std::string& expected) const {
  auto it = obj.find(key);
  if (it == obj.end()) fail(at(path, key), "required key is missing (expected " + expected + ")");
  return *it;
}

const json* Reader::optional(const json& obj, const std::string& key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

int Reader::integer(const json& v, const std::string& path, std::int64_t lo, std::int64_t hi,
                    const std::string& expected) const {
  // Non-negative JSON integers arrive unsigned and may exceed int64_t.
  bool ok = false;
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    ok = u <= static_cast<std::uint64_t>(hi) && static_cast<std::int64_t>(u) >= lo;
  } else if (v.is_number_integer()) {
    auto s = v.get<std::int64_t>();
    ok = s >= lo && s <= hi;
  }
  expect(ok, path, expected, v);
  return static_cast<int>(v.get<std::int64_t>());
}

double Reader::number(const json& v, const std::string& path, double lo, double hi, const std::string& expected) const {
  bool ok = v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > lo && v.get<double>() <= hi;
  expect(ok, path, expected, v);
  return v.get<double>();
}

std::string Reader::text(const json& v, const std::string& path) const {
  expect(v.is_string() && !v.get<std::string>().empty(), path, "a non-empty string", v);
  return v.get<std::string>();
}

std::vector<std::string> Reader::text_list(const json& v, const std::string& path) const {
  expect(v.is_array(), path, "an array of strings", v);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(text(v[i], at(path, i)));
  return out;
}

std::map<std::string, std::string> Reader::text_map(const json& v, const std::string& path) const {
  expect(v.is_object(), path, "an object of strings", v);
  std::map<std::string, std::string> out;
  for (const auto& item : v.items())
    if (!is_comment_key(item.key())) out[item.key()] = text(item.value(), at(path, item.key()));
  return out;
}

}  // namespace grader::manifest_detail
