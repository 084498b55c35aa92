#include "calibration.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

std::string gpu_model_key(const std::string& gpu_name) {
  std::string key;
  for (const char ch : gpu_name) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c))
      key += static_cast<char>(std::tolower(c));
    else if (!key.empty() && key.back() != '-')
      key += '-';
  }
  while (!key.empty() && key.back() == '-') key.pop_back();
  return key.empty() ? "unnamed-gpu" : key;
}

bool is_design_card(const std::string& gpu, const std::string& design_gpu) {
  return !design_gpu.empty() && gpu_model_key(gpu) == gpu_model_key(design_gpu);
}

std::string timed_check_id(int step, const Check& c) {
  return "step" + std::to_string(step) + ":" + name_of(c.kind) + ":" + c.case_name;
}

namespace {

template <typename E, std::size_t N>
const std::string& name_in(const std::array<std::string, N>& names, E value) {
  return names.at(static_cast<std::size_t>(value));
}

const std::array<std::string, 4> kStatusNames = {"design", "scaled", "moved", "conflict"};
const std::array<std::string, 4> kStateNames = {"no_gpu", "calibrated", "design_card", "uncalibrated"};

CalibratedCheck::Status status_named(const std::string& name, const std::string& where) {
  for (std::size_t i = 0; i < kStatusNames.size(); ++i)
    if (kStatusNames[i] == name) return static_cast<CalibratedCheck::Status>(i);
  throw CalibrationError(where + ": status \"" + name + "\" is none of design, scaled, moved, conflict");
}

json medians_json(const std::map<std::string, double>& m) {
  json j = json::object();
  for (const auto& [name, v] : m) j[name] = v;
  return j;
}

std::map<std::string, double> medians_from(const json& j, const std::string& where) {
  std::map<std::string, double> out;
  if (!j.is_object()) throw CalibrationError(where + " is not an object of program -> median");
  for (const auto& [name, v] : j.items()) {
    if (!v.is_number()) throw CalibrationError(where + "." + name + " is not a number");
    out[name] = v.get<double>();
  }
  return out;
}

const json& required(const json& j, const std::string& key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw CalibrationError(where + ": \"" + key + "\" is missing");
  return j.at(key);
}

std::string required_string(const json& j, const std::string& key, const std::string& where) {
  const json& v = required(j, key, where);
  if (!v.is_string()) throw CalibrationError(where + ": \"" + key + "\" is not a string");
  return v.get<std::string>();
}

double required_positive(const json& j, const std::string& key, const std::string& where) {
  const json& v = required(j, key, where);
  if (!v.is_number() || !(v.get<double>() > 0))
    throw CalibrationError(where + ": \"" + key + "\" is not a number above 0");
  return v.get<double>();
}

CalibratedCheck check_from_json(const json& j, const std::string& where) {
  CalibratedCheck c;
  c.status = status_named(required_string(j, "status", where), where);
  c.design_min = required_positive(j, "design_min", where);
  c.min = required_positive(j, "min", where);
  if (j.contains("reference") && !j.at("reference").is_null()) c.reference = required_positive(j, "reference", where);
  if (j.contains("honest")) c.honest = medians_from(j.at("honest"), where + ".honest");
  if (j.contains("failing")) c.failing = medians_from(j.at("failing"), where + ".failing");
  if (j.contains("why")) c.why = required_string(j, "why", where);
  return c;
}

std::optional<Calibration> read_if_there(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  return read_calibration(file);
}

}  // namespace

const std::string& name_of(CalibratedCheck::Status status) { return name_in(kStatusNames, status); }
const std::string& name_of(CalibrationUse::State state) { return name_in(kStateNames, state); }

json calibration_to_json(const Calibration& c) {
  json labs = json::object();
  for (const auto& [lab, checks] : c.labs) {
    json lj = json::object();
    for (const auto& [id, k] : checks)
      lj[id] = {{"status", name_of(k.status)},
                {"design_min", k.design_min},
                {"min", k.min},
                {"reference", k.reference ? json(*k.reference) : json(nullptr)},
                {"honest", medians_json(k.honest)},
                {"failing", medians_json(k.failing)},
                {"why", k.why}};
    labs[lab] = lj;
  }
  return {{"format", kCalibrationFormat},
          {"gpu", c.gpu},
          {"toolkit", c.toolkit},
          {"driver", c.driver},
          {"made_at", c.made_at},
          {"design_gpu", c.design_gpu},
          {"labs", labs}};
}

Calibration calibration_from_json(const json& j, const std::string& source) {
  const json& format = required(j, "format", source);
  if (!format.is_number_integer() || format.get<int>() != kCalibrationFormat)
    throw CalibrationError(source + ": format " + format.dump() + ", this grader reads format " +
                           std::to_string(kCalibrationFormat) + " (run grader calibrate again)");
  Calibration c;
  c.gpu = required_string(j, "gpu", source);
  c.toolkit = required_string(j, "toolkit", source);
  if (j.contains("driver")) c.driver = required_string(j, "driver", source);
  if (j.contains("made_at")) c.made_at = required_string(j, "made_at", source);
  if (j.contains("design_gpu")) c.design_gpu = required_string(j, "design_gpu", source);
  const json& labs = required(j, "labs", source);
  if (!labs.is_object()) throw CalibrationError(source + ": \"labs\" is not an object");
  for (const auto& [lab, checks] : labs.items()) {
    if (!checks.is_object()) throw CalibrationError(source + ": labs." + lab + " is not an object");
    for (const auto& [id, k] : checks.items()) c.labs[lab][id] = check_from_json(k, source + ": " + lab + "." + id);
  }
  return c;
}

Calibration read_calibration(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw CalibrationError(file.string() + ": cannot be read");
  json j;
  try {
    in >> j;
  } catch (const json::exception& e) {
    throw CalibrationError(file.string() + ": not JSON (" + std::string(e.what()) + ")");
  }
  return calibration_from_json(j, file.string());
}

std::vector<Calibration> course_calibrations(const fs::path& course_root) {
  std::vector<Calibration> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(course_root / kCalibrationFolder, ec)) {
    const fs::path& file = entry.path();
    if (file.extension() != ".json" || file.filename() == kDesignGpuFile || !entry.is_regular_file(ec)) continue;
    Calibration c = read_calibration(file);
    // Grades read a card's calibration by its model's name alone: one under another name would be listed and never used.
    if (file.stem() != gpu_model_key(c.gpu))
      throw CalibrationError(file.string() + " holds the calibration of " + c.gpu + ", which grades read only as " +
                             gpu_model_key(c.gpu) + ".json");
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const Calibration& a, const Calibration& b) { return a.gpu < b.gpu; });
  return out;
}

std::string design_gpu(const fs::path& course_root) {
  const fs::path file = course_root / kCalibrationFolder / kDesignGpuFile;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return "";
  std::ifstream in(file);
  json j;
  try {
    in >> j;
  } catch (const json::exception& e) {
    throw CalibrationError(file.string() + ": not JSON (" + std::string(e.what()) + ")");
  }
  return required_string(j, "gpu", file.string());
}

fs::path user_calibration_file(const fs::path& state_dir, const std::string& gpu_name, const std::string& toolkit) {
  return state_dir / "calibration" / (gpu_model_key(gpu_name) + "-cuda" + toolkit + ".json");
}

CalibrationUse calibration_for(const fs::path& course_root, const std::string& gpu_name,
                               const std::optional<fs::path>& user_cache) {
  CalibrationUse use;
  use.gpu = gpu_name;
  if (gpu_name.empty()) return use;
  use.design_gpu = design_gpu(course_root);
  const fs::path course_file = course_root / kCalibrationFolder / (gpu_model_key(gpu_name) + ".json");
  const auto read_for_this_gpu = [&](const fs::path& file) -> std::optional<Calibration> {
    auto c = file.empty() ? std::nullopt : read_if_there(file);
    if (c && c->gpu != gpu_name)
      throw CalibrationError(file.string() + " was made on " + c->gpu + ", not on this " + gpu_name);
    return c;
  };
  auto course = read_for_this_gpu(course_file);
  auto own = read_for_this_gpu(user_cache.value_or(fs::path()));
  if (course || own) {
    use.state = CalibrationUse::State::calibrated;
    use.file = course ? course_file : *user_cache;
    use.calibration = course ? std::move(course) : std::move(own);
    if (use.calibration && own) {  // the user's beside the course's: for the labs the course's lacks
      use.own_file = *user_cache;
      use.own = std::move(own);
    }
    return use;
  }
  use.state = is_design_card(gpu_name, use.design_gpu) ? CalibrationUse::State::design_card
                                                       : CalibrationUse::State::uncalibrated;
  return use;
}

Manifest with_calibration(Manifest manifest, const std::string& lab_folder, CalibrationUse& use) {
  use.uncalibrated_checks.clear();
  if (use.state == CalibrationUse::State::no_gpu || use.state == CalibrationUse::State::design_card) return manifest;
  // On the design card lab.json's value is the card's own: a check its calibration lacks is not uncalibrated.
  const bool design_card = is_design_card(use.gpu, use.design_gpu);
  fs::path from;
  const std::map<std::string, CalibratedCheck>* checks = use.lab_checks(lab_folder, &from);
  if (checks) use.file = from;  // the header names where this lab's values come from
  const auto apply = [&](int step, Check& c) {
    if (!is_timed(c)) return;
    const std::string id = timed_check_id(step, c);
    const auto k = checks ? checks->find(id) : std::map<std::string, CalibratedCheck>::const_iterator();
    // A value made for another lab.json threshold is stale: the design value holds until calibrated again.
    if (checks && k != checks->end() && k->second.design_min == c.min)
      c.min = k->second.min;
    else if (!design_card)
      use.uncalibrated_checks.push_back(id);
  };
  for (auto& step : manifest.steps)
    for (auto& c : step.checks) {
      apply(step.id, c);
      for (auto& f : c.fallback) apply(step.id, f);
    }
  return manifest;
}

const std::map<std::string, CalibratedCheck>* CalibrationUse::lab_checks(const std::string& lab_folder,
                                                                         fs::path* from) const {
  for (const auto& [c, its_file] : {std::pair{&calibration, &file}, std::pair{&own, &own_file}}) {
    if (!*c) continue;
    if (const auto l = (*c)->labs.find(lab_folder); l != (*c)->labs.end()) {
      if (from) *from = *its_file;
      return &l->second;
    }
  }
  return nullptr;
}

std::string CalibrationUse::header(const std::string& course_root_text) const {
  switch (state) {
    case State::no_gpu:
      return "";
    case State::calibrated: {
      std::string where = file.string();
      if (!course_root_text.empty() && where.rfind(course_root_text + "/", 0) == 0)
        where = where.substr(course_root_text.size() + 1);
      std::string line = "thresholds calibrated for " + gpu + " (" + where + ")";
      if (!uncalibrated_checks.empty())
        line += "; " + std::to_string(uncalibrated_checks.size()) +
                " timed check(s) it has no value for use the design values";
      return line;
    }
    case State::design_card:
      return "thresholds: the design values, chosen on this GPU model (" + gpu + ")";
    case State::uncalibrated:
      return "thresholds uncalibrated for " + gpu + ": the design values" +
             (design_gpu.empty() ? std::string() : ", chosen on an " + design_gpu) +
             ", so a timed verdict may be off by what this card does differently; an instructor makes one with "
             "`grader calibrate` on this GPU";
  }
  return "";
}

std::string CalibrationUse::timed_suffix(const std::string& check_id) const {
  const bool uncalibrated =
      state == State::uncalibrated ||
      (state == State::calibrated &&
       std::find(uncalibrated_checks.begin(), uncalibrated_checks.end(), check_id) != uncalibrated_checks.end());
  return uncalibrated ? " (uncalibrated for " + gpu + ")" : "";
}

}  // namespace grader
