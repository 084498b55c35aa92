// A batch's result files: one a submission under results/, named safely from
// its id, written whole or not at all, in the batch-result/1 schema that a
// rerun reads back to skip what is already graded.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "batch.hpp"
#include "protocol/named_enum.hpp"
#include "sha256.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

constexpr const char* kRowSchema = "cuda-memory-labs/batch-result/1";

}  // namespace

std::string result_file_stem(const std::string& id) {
  const bool plain =
      !id.empty() && id.size() <= 100 && id[0] != '-' && id[0] != '.' && std::all_of(id.begin(), id.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
      });
  if (plain) return id;
  return "id-" + sha256_hex(id).substr(0, 24);
}

json row_to_json(const BatchRow& r, const std::string& lab_id, const std::string& isolation) {
  return {{"schema", kRowSchema},
          {"id", r.id},
          {"lab", lab_id},
          {"status", r.status},
          {"reason", r.reason},
          {"submission_hash", r.hash},
          {"hints_used", r.hints_used},
          {"hints_source", kHintsSource},
          {"isolation", isolation},
          {"grader_exit_code", r.grader_exit_code},
          {"seconds", r.seconds},
          {"report", r.report_document}};
}

const char* name_of(RowStatus status) {
  switch (status) {
    case RowStatus::graded:
      return "graded";
    case RowStatus::rejected:
      return "rejected";
    case RowStatus::error:
      return "error";
    case RowStatus::not_graded:
      return "not_graded";
  }
  return "error";  // not reached: every RowStatus is named above
}

void to_json(json& j, RowStatus status) { j = name_of(status); }

void from_json(const json& j, RowStatus& status) {
  status = memlabs::enum_from_json(j, kEveryRowStatus, "batch row status");
}

BatchRow row_from_json(const json& j) {
  if (!j.is_object() || j.value("schema", "") != kRowSchema) throw std::runtime_error("not a batch result");
  BatchRow r;
  r.id = j.at("id").get<std::string>();
  r.status = j.at("status").get<RowStatus>();
  r.reason = j.value("reason", "");
  r.hash = j.value("submission_hash", "");
  r.hints_used = j.value("hints_used", 0);
  r.grader_exit_code = j.value("grader_exit_code", -1);
  r.seconds = j.value("seconds", 0.0);
  if (const json report = j.value("report", json()); !report.is_null()) set_report(r, report);
  return r;
}

void set_report(BatchRow& row, json document) {
  clear_report(row);
  GradeReport typed = report_from_json(document);
  row.report_document = std::move(document);
  row.report = std::move(typed);
}

void clear_report(BatchRow& row) {
  row.report_document = nullptr;
  row.report.reset();
}

}  // namespace grader
