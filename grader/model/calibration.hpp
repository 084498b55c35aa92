// Thresholds per GPU model. lab.json's timed thresholds (speedup,
// fraction_of_peak, fraction_of_library) are design values, chosen on one card
// (calibration/design.json names it). Another card moves memory at another
// rate and runs kernels in other proportions: on an H200 honest stencils reach
// 0.54 of its copy bandwidth where the H100's threshold asks 0.55. A course
// therefore carries one calibration per GPU model, calibration/<model>.json,
// written by `grader calibrate` on that card (authoring/calibrate.hpp), and a
// grade on that card reads its thresholds from there. A card the course has
// none for is graded with the design values, and every timed verdict says
// "uncalibrated for <GPU>".
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "manifest.hpp"

namespace grader {

inline constexpr int kCalibrationFormat = 1;
inline constexpr const char* kCalibrationFolder = "calibration";
inline constexpr const char* kDesignGpuFile = "design.json";

// "nvidia-h100-80gb-hbm3" from "NVIDIA H100 80GB HBM3": a calibration's file stem.
std::string gpu_model_key(const std::string& gpu_name);

// Whether `gpu` is the model the design values were chosen on (`design_gpu`, "" when the course names none).
bool is_design_card(const std::string& gpu, const std::string& design_gpu);

// "step3:fraction_of_peak:33554432": a timed check's name in a calibration
// (the step, the kind and the case; a lab has one timed check of a kind per case and step).
std::string timed_check_id(int step, const Check& c);

// One timed check's threshold on one GPU model, and the measurements it came from.
struct CalibratedCheck {
  enum class Status {
    design,    // the card lab.json's thresholds were chosen on: its own value
    scaled,    // the design value scaled by this card's reference against the design card's
    moved,     // moved off the scaled value so every honest program passes and every wrong one fails
    conflict,  // no value does both: the scaled value is kept, and `grader calibrate` says so
  };
  Status status = Status::design;
  double design_min = 0;            // lab.json's value when calibrated: a calibration made for another value is stale
  double min = 0;                   // the threshold on this card
  std::optional<double> reference;  // the solution's median on this card
  std::map<std::string, double> honest, failing;  // program name -> median
  std::string why;                                // how the value was chosen, in words
};
const std::string& name_of(CalibratedCheck::Status status);

struct Calibration {
  std::string gpu, toolkit, driver, made_at;
  std::string design_gpu;  // the card the design values were chosen on
  // lab folder -> timed_check_id -> its check
  std::map<std::string, std::map<std::string, CalibratedCheck>> labs;
};

class CalibrationError : public std::runtime_error {
  using runtime_error::runtime_error;
};

nlohmann::json calibration_to_json(const Calibration& c);
// Throws CalibrationError naming `source` and what does not read.
Calibration calibration_from_json(const nlohmann::json& j, const std::string& source);
Calibration read_calibration(const std::filesystem::path& file);
// Every calibration the course holds (calibration/*.json but design.json), ordered by GPU name.
// Throws CalibrationError naming a file that does not read.
std::vector<Calibration> course_calibrations(const std::filesystem::path& course_root);

// The course's design card (calibration/design.json), "" when the course names none.
std::string design_gpu(const std::filesystem::path& course_root);

// Which thresholds a grade on this GPU uses, and what to say about it.
struct CalibrationUse {
  enum class State {
    no_gpu,        // nothing is timed
    calibrated,    // a calibration of this GPU model
    design_card,   // the design card itself, without a calibration file
    uncalibrated,  // another card, no calibration: the design values
  };
  State state = State::no_gpu;
  std::string gpu;
  std::filesystem::path
      file;  // the calibration read (calibrated); with_calibration: the one this lab's values are from
  std::string design_gpu;
  std::optional<Calibration> calibration;
  // Self-study beside a course file: this user's calibration of the labs the
  // course's file for this GPU lacks (grader grade and watch only).
  std::filesystem::path own_file;
  std::optional<Calibration> own;

  // `lab_folder`'s calibrated checks: the course's file first, then this
  // user's; null where neither holds the lab. `from`, when given, gets the file.
  const std::map<std::string, CalibratedCheck>* lab_checks(const std::string& lab_folder,
                                                           std::filesystem::path* from = nullptr) const;
  bool has_lab(const std::string& lab_folder) const { return lab_checks(lab_folder) != nullptr; }
  // Timed checks of this lab the calibration has no value for, or one made for
  // another lab.json value: graded with the design value, and said so.
  std::vector<std::string> uncalibrated_checks;

  // The one line every grade's header shows; "" without a GPU.
  std::string header(const std::string& course_root_text = "") const;
  // What a timed check's verdict adds: " (uncalibrated for NVIDIA L4)" or "".
  std::string timed_suffix(const std::string& check_id) const;
};
const std::string& name_of(CalibrationUse::State state);

// The calibration of `gpu_name` for this course: calibration/<model>.json, and
// (grader grade and watch outside a sandbox only) the one `grader calibrate`
// kept under `user_cache` for this GPU and toolkit, alone or for the labs the
// course's file lacks. Throws CalibrationError when a file is there but does
// not read: a broken calibration is the course's error.
CalibrationUse calibration_for(const std::filesystem::path& course_root, const std::string& gpu_name,
                               const std::optional<std::filesystem::path>& user_cache = std::nullopt);

// Where `grader calibrate` keeps a self-study calibration for this GPU model and toolkit.
std::filesystem::path user_calibration_file(const std::filesystem::path& state_dir, const std::string& gpu_name,
                                            const std::string& toolkit);

// The manifest with every timed threshold (fallbacks' too) this card's
// calibration has a value for; `use.uncalibrated_checks` lists those it has none for.
Manifest with_calibration(Manifest manifest, const std::string& lab_folder, CalibrationUse& use);

}  // namespace grader
