#include "ncu_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "text.hpp"

namespace grader {
namespace {

std::string count(double v) { return fixed(v, 0); }

// One line of ncu's CSV: every field is quoted and no field holds a quote.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"')
      quoted = !quoted;
    else if (ch == ',' && !quoted)
      out.push_back(field), field.clear();
    else if (ch != '\r' && ch != '\n')
      field += ch;
  }
  out.push_back(field);
  return out;
}

// "1,015,808" and "7,695.52": ncu groups thousands with commas.
std::optional<double> number(std::string text) {
  std::string digits;
  for (char ch : text)
    if (ch != ',') digits += ch;
  if (digits.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(digits, &used);
    if (used != digits.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

// "(32, 8, 1)" -> 256.
double product_of(const std::string& dims) {
  double p = 1;
  bool any = false;
  std::string digits;
  for (char ch : dims + ",") {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      digits += ch;
    } else if (!digits.empty()) {
      p *= std::stod(digits);
      digits.clear();
      any = true;
    }
  }
  return any ? p : 0;
}

// ---- One function per measure: its number and the sentences that explain it ----

NcuValue with_summary(double value, const std::string& amount, const NcuReading& r) {
  NcuValue out;
  out.value = value;
  out.summary = amount + " " + r.measure.unit;
  return out;
}

// The worse of loads and stores: a 32-way conflict on one of them is what the
// student must fix, and averaging it with clean stores would halve it.
NcuValue bank_conflicts(const NcuReading& r) {
  const double ld = r.v[0], st = r.v[1], ld_req = r.v[2], st_req = r.v[3];
  const bool loads_worse = ratio(ld, ld_req) >= ratio(st, st_req);
  const double value = std::max(ratio(ld, ld_req), ratio(st, st_req));
  NcuValue out = with_summary(value, readable_amount(value), r);
  if (value > 0) out.summary += loads_worse ? " (loads)" : " (stores)";
  out.details.push_back("loads: " + readable_amount(ratio(ld, ld_req)) + " conflicts per request (" + count(ld) +
                        " over " + count(ld_req) + " requests); stores: " + readable_amount(ratio(st, st_req)) + " (" +
                        count(st) + " over " + count(st_req) + ")");
  if (ld_req + st_req == 0) out.details.push_back("the kernel executed no shared-memory loads or stores");
  return out;
}

NcuValue sectors_per_request(const NcuReading& r) {
  const double ld = r.v[0], st = r.v[1], ld_req = r.v[2], st_req = r.v[3];
  const double value = ratio(ld + st, ld_req + st_req);
  NcuValue out = with_summary(value, fixed(value, 1), r);
  out.details.push_back("loads: " + fixed(ratio(ld, ld_req), 1) + " sectors per request (" + count(ld) + " over " +
                        count(ld_req) + "); stores: " + fixed(ratio(st, st_req), 1) + " (" + count(st) + " over " +
                        count(st_req) + "); a warp reading 32 consecutive floats needs 4");
  return out;
}

NcuValue store_sectors_per_request(const NcuReading& r) {
  const double value = ratio(r.v[0], r.v[1]);
  NcuValue out = with_summary(value, readable_amount(value), r);
  out.details.push_back(count(r.v[0]) + " sectors over " + count(r.v[1]) +
                        " store requests; a warp storing 32 consecutive floats needs 4, 32 consecutive float4s 16");
  return out;
}

NcuValue stored_bytes(const NcuReading& r) {
  const double value = r.v[0] * 32 / r.elements;
  NcuValue out = with_summary(value, readable_amount(value), r);
  out.details.push_back(count(r.v[0]) + " 32-byte sectors stored over " + count(r.elements) + " output elements");
  return out;
}

NcuValue local_bytes(const NcuReading& r) {
  NcuValue out = with_summary(r.v[0] + r.v[1], count(r.v[0] + r.v[1]), r);
  out.details.push_back(count(r.v[0]) + " bytes loaded from and " + count(r.v[1]) + " bytes stored to local memory");
  return out;
}

NcuValue shared_loads_per_block(const NcuReading& r) {
  const double value = ratio(r.v[0], r.blocks);
  NcuValue out = with_summary(value, readable_amount(value), r);
  out.details.push_back(count(r.v[0]) + " shared-memory load instructions (per warp) over " + count(r.blocks) +
                        " blocks");
  if (r.v[0] == 0) out.details.push_back("the kernel's shared-memory loads never ran");
  return out;
}

// Loads (the first counter) per value the launch stored (the last: store
// sectors, 8 four-byte values each), the values counted at most as the case's
// outputs.
NcuValue loads_per_stored_value(const NcuReading& r, const std::string& space) {
  const double stored = r.v.back() * 8;
  const double values = r.elements > 0 ? std::min(stored, r.elements) : stored;
  const double value = values > 0 ? r.v[0] * 32 / values : 0;
  NcuValue out = with_summary(value, readable_amount(value), r);
  out.details.push_back(count(r.v[0]) + " " + space + " load instructions (per warp) over " + count(values) +
                        " values stored (" + count(r.v.back()) + " sectors" +
                        (values < stored ? ", counted as the case's " + count(r.elements) + " outputs" : "") + ")");
  if (values == 0) out.details.push_back("the launch stored nothing");
  return out;
}
NcuValue shared_loads_per_stored_value(const NcuReading& r) { return loads_per_stored_value(r, "shared-memory"); }
NcuValue global_loads_per_stored_value(const NcuReading& r) { return loads_per_stored_value(r, "global-memory"); }

NcuValue shared_instructions(const NcuReading& r) {
  NcuValue out = with_summary(r.v[0] + r.v[1], count(r.v[0] + r.v[1]), r);
  out.details.push_back(count(r.v[0]) + " shared-memory load and " + count(r.v[1]) + " store instructions (per warp)");
  return out;
}

NcuValue non_constant_loads(const NcuReading& r) {
  const double value = (r.v[0] + r.v[1] + r.v[2]) * 32 / r.elements;
  NcuValue out = with_summary(value, readable_amount(value), r);
  out.details.push_back("load instructions (per warp): global " + count(r.v[0]) + ", local " + count(r.v[1]) +
                        ", shared " + count(r.v[2]) + ", over " + count(r.elements) + " output elements");
  return out;
}

}  // namespace

std::string readable_amount(double v) {
  if (v == 0 || std::abs(v) >= 0.1) return fixed(v, 1);
  // Two significant digits: 1 conflict in 32,768 requests reads 0.000031, not 0.0.
  return fixed(v, std::min(12, static_cast<int>(std::ceil(-std::log10(std::abs(v)))) + 1));
}

// Long (about 100 lines) on purpose: the table of measures, one entry each,
// every counter a measure needs beside the reason it is asked for.
const std::vector<NcuMeasure>& ncu_measures() {
  static const std::vector<NcuMeasure> m = {
      {"shared_bank_conflicts_per_request",
       "bank conflicts per shared-memory request",
       {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "sm__sass_inst_executed_op_shared_ld.sum",
        "sm__sass_inst_executed_op_shared_st.sum"},
       bank_conflicts,
       "bank_conflicts"},
      {"global_sectors_per_request",
       "32-byte sectors per global-memory request",
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"},
       sectors_per_request,
       "uncoalesced"},
      {"local_memory_bytes",
       "bytes of local-memory traffic",
       {"l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"},
       local_bytes,
       "local_memory"},
      // Stores alone: a warp writing 32 consecutive floats needs 4 sectors, 32
      // consecutive float4s 16 (as coalesced as 16-byte stores get), one row
      // per lane 32. Loads mix in broadcasts (one sector for the whole warp)
      // that hide a strided pattern in an average.
      {"global_store_sectors_per_request",
       "32-byte sectors per global-memory store request",
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"},
       store_sectors_per_request,
       "uncoalesced"},
      // The named kernel did the work: the bytes its stores covered, per output
      // element, over all its launches in the case. A kernel that writes every
      // output element once covers at least the output's size; one launched
      // for show while another kernel or a copy fills the output covers little.
      {"stored_bytes_per_element",
       "bytes stored to global memory per output element",
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"},
       stored_bytes,
       "not_the_named_kernel",
       NcuMeasure::at_least,
       true},
      // Evidence that shared memory is used when the kernel runs, not only in
      // a branch that never executes: a tile in shared memory is read back by
      // every block that fills it.
      {"shared_loads_per_block",
       "shared-memory loads executed per block",
       {"sm__sass_inst_executed_op_shared_ld.sum"},
       shared_loads_per_block,
       "memory_space",
       NcuMeasure::at_least},
      // The tile is where the data comes from: per output value a launch
      // stored, the shared-memory loads it executed (per warp, times 32). A
      // 17 x 17 box from a tile with one output per thread executes 289, a
      // matrix product's tile two per multiply-add; a kernel that reads its
      // operands from global memory and touches shared memory for show,
      // about one. A float4 load is one instruction for four values, so a
      // bound must leave room for a thread that computes a patch of outputs
      // from float4 reads of the tile (an 8 x 8 patch of the 17 x 17 box: 2.25).
      {"shared_loads_per_output",
       "shared-memory loads per output value stored",
       {"sm__sass_inst_executed_op_shared_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"},
       shared_loads_per_stored_value,
       "memory_space",
       NcuMeasure::at_least,
       false,
       true},
      // ... and global memory is read about once per value the tile holds:
      // per output value a launch stored, its global load requests (per warp,
      // times 32, plain or read-only, through any pointer). A 32 x 8 tile with
      // a halo of 8 loads 4.5 to 6, a 32 x 1 tile 26 to 34 (a row of the
      // tile that is not a multiple of 32 floats takes a partial request), a
      // plain 17 x 17 box 289.
      {"global_loads_per_output",
       "global-memory loads per output value stored",
       {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"},
       global_loads_per_stored_value,
       "memory_space",
       NcuMeasure::at_most,
       false,
       true},
      // No shared memory at all: for a step whose measurement says plain
      // loads win, the kernel's shared-memory loads and stores, per launch.
      {"shared_memory_instructions",
       "shared-memory loads and stores executed",
       {"sm__sass_inst_executed_op_shared_ld.sum", "sm__sass_inst_executed_op_shared_st.sum"},
       shared_instructions,
       "memory_space"},
      // Evidence by exclusion: every load executed from global (plain or
      // read-only, through any pointer), local or shared memory, per output
      // element (counted per warp, times 32). A kernel that reads its
      // coefficients from __constant__ memory executes about one (its input);
      // one that reads 64 coefficients from global memory executes 65. The
      // texture path is the step's static check's to forbid.
      {"non_constant_loads_per_element",
       "loads from global, local or shared memory per output element",
       {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "sm__sass_inst_executed_op_local_ld.sum",
        "sm__sass_inst_executed_op_shared_ld.sum"},
       non_constant_loads,
       "memory_space",
       NcuMeasure::at_most,
       true},
  };
  return m;
}

std::string ncu_bound_in_words(const NcuMeasure& measure, double bound) {
  if (measure.rule == NcuMeasure::at_least) return "at least " + readable_amount(bound);
  return bound == 0 ? std::string("0") : "at most " + readable_amount(bound);
}

const NcuMeasure* find_ncu_measure(const std::string& name) {
  for (const auto& m : ncu_measures())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> ncu_arguments(const std::filesystem::path& ncu, const std::vector<std::string>& wanted,
                                       const std::string& kernel, const std::filesystem::path& log_file) {
  std::string metrics;
  for (const auto& m : wanted) metrics += (metrics.empty() ? "" : ",") + m;
  return {ncu.string(),
          "--clock-control",
          "none",
          "--kernel-name",
          kernel,
          "--launch-count",
          std::to_string(kMaxProfiledLaunches + 1),
          "--csv",
          "--page",
          "raw",
          "--metrics",
          metrics,
          "--log-file",
          log_file.string()};
}

NcuLog parse_ncu_log(const std::string& log) {
  NcuLog out;
  std::vector<std::vector<std::string>> rows;
  bool listing = false;
  for (const auto& line : lines_of(log)) {
    if (!line.empty() && line[0] == '"') {
      rows.push_back(csv_fields(line));
      continue;
    }
    if (line.find("ERR_NVGPUCTRPERM") != std::string::npos) {
      out.status = NcuLog::not_permitted;
      out.message = "this user may not read the GPU's performance counters (ERR_NVGPUCTRPERM)";
      return out;
    }
    if (line.find("No kernels were profiled") != std::string::npos) out.status = NcuLog::no_kernel;
    if (line.rfind("Available Kernels", 0) == 0) {
      listing = true;
      continue;
    }
    // "1. dot_shuffle_kernel" under "Available Kernels:"
    const auto dot = line.find(". ");
    if (listing && dot != std::string::npos && dot > 0 && line.find_first_not_of("0123456789") == dot)
      out.launched.push_back(line.substr(dot + 2));
    if (line.rfind("==ERROR==", 0) == 0 && out.message.empty()) out.message = line.substr(10);
  }
  if (out.status == NcuLog::no_kernel) {
    out.message = "ncu saw no launch of the kernel";
    return out;
  }
  // Row 0 names the columns, row 1 gives units, each row after it is a launch.
  if (rows.size() < 3) {
    if (out.message.empty()) out.message = "ncu wrote no measurements";
    out.status = NcuLog::failed;
    return out;
  }
  const auto& names = rows[0];
  for (std::size_t r = 2; r < rows.size(); ++r) {
    const auto& values = rows[r];
    NcuLaunch launch;
    for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
      if (names[i] == "Kernel Name") launch.kernel = values[i];
      if (names[i] == "Grid Size") launch.blocks = product_of(values[i]);
      if (names[i].find("__") == std::string::npos) continue;  // ncu's own columns, not metrics
      if (auto v = number(values[i])) launch.metrics[names[i]] = *v;
    }
    out.launches.push_back(std::move(launch));
  }
  out.status = NcuLog::ok;
  out.message.clear();
  return out;
}

std::vector<NcuLaunch> judged_launches(const NcuMeasure& measure, const std::vector<NcuLaunch>& launches) {
  if (!measure.per_element || launches.size() < 2) return launches;
  NcuLaunch all = launches.front();
  for (std::size_t i = 1; i < launches.size(); ++i) {
    all.blocks += launches[i].blocks;
    for (const auto& [name, value] : launches[i].metrics) all.metrics[name] += value;
  }
  return {all};
}

NcuJudgement judge_launches(const NcuMeasure& measure, const std::vector<NcuLaunch>& launches, double bound,
                            double elements) {
  NcuJudgement out;
  if (launches.size() > static_cast<std::size_t>(kMaxProfiledLaunches)) {
    out.status = NcuJudgement::too_many_launches;
    return out;
  }
  const bool at_least = measure.rule == NcuMeasure::at_least;
  const auto meets = [&](double v) { return at_least ? v >= bound - 1e-9 : v <= bound + 1e-9; };
  auto judged = judged_launches(measure, launches);
  if (measure.per_stored_value) {
    const std::string& stores = measure.metrics.back();
    std::vector<NcuLaunch> storing;
    for (const auto& l : judged)
      if (l.metrics.count(stores) && l.metrics.at(stores) > 0) storing.push_back(l);
    // None stored anything: the first speaks, as 0 (stored_bytes_per_element says why).
    if (storing.empty() && !judged.empty()) storing.push_back(judged.front());
    judged = std::move(storing);
  }
  std::optional<NcuValue> worst;
  for (std::size_t i = 0; i < judged.size(); ++i) {
    const auto value = evaluate(measure, judged[i], elements);
    if (!value) return NcuJudgement{};  // a counter missing: not measured
    out.values.push_back(value->value);
    if (!meets(value->value)) ++out.failing;
    if (!worst || (at_least ? value->value < worst->value : value->value > worst->value)) {
      worst = value;
      out.worst_launch = i;
    }
  }
  if (!worst) return NcuJudgement{};
  out.worst = *worst;
  out.judged = judged.size();
  out.status = out.failing > 0 ? NcuJudgement::fails : NcuJudgement::ok;
  return out;
}

std::optional<NcuValue> evaluate(const NcuMeasure& measure, const NcuLaunch& launch, double elements) {
  std::vector<double> v;
  for (const auto& name : measure.metrics) {
    const auto it = launch.metrics.find(name);
    if (it == launch.metrics.end()) return std::nullopt;
    v.push_back(it->second);
  }
  if (measure.per_element && !(elements > 0)) return std::nullopt;
  return measure.value_of(NcuReading{measure, v, launch.blocks, elements});
}

}  // namespace grader
