// The ncu measures (ncu_report.hpp): for each, the counters it needs, the
// function that turns one launch's counters into a number with the sentences
// that explain it, and the side its bound is on. Reading ncu's output and
// judging launches are in ncu_report.cpp.
#include <algorithm>
#include <cmath>

#include "ncu_report.hpp"
#include "text.hpp"

namespace grader {
namespace {

std::string count(double v) { return fixed(v, 0); }

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

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
  if (ld > 0) out.look_at.push_back("ld.shared");
  if (st > 0) out.look_at.push_back("st.shared");
  return out;
}

NcuValue sectors_per_request(const NcuReading& r) {
  const double ld = r.v[0], st = r.v[1], ld_req = r.v[2], st_req = r.v[3];
  const double value = ratio(ld + st, ld_req + st_req);
  NcuValue out = with_summary(value, fixed(value, 1), r);
  out.details.push_back("loads: " + fixed(ratio(ld, ld_req), 1) + " sectors per request (" + count(ld) + " over " +
                        count(ld_req) + "); stores: " + fixed(ratio(st, st_req), 1) + " (" + count(st) + " over " +
                        count(st_req) + "); a warp reading 32 consecutive floats needs 4");
  // Where to look: each side worse than a warp of consecutive floats (4 sectors), else the worse side.
  const double ld_ratio = ratio(ld, ld_req), st_ratio = ratio(st, st_req);
  const bool either = ld_ratio > 4 || st_ratio > 4;
  if (either ? ld_ratio > 4 : ld_ratio >= st_ratio)
    out.look_at.insert(out.look_at.end(), {"ld.global", "ld.global.nc"});
  if (either ? st_ratio > 4 : st_ratio > ld_ratio) out.look_at.push_back("st.global");
  return out;
}

NcuValue store_sectors_per_request(const NcuReading& r) {
  const double value = ratio(r.v[0], r.v[1]);
  NcuValue out = with_summary(value, readable_amount(value), r);
  out.details.push_back(count(r.v[0]) + " sectors over " + count(r.v[1]) +
                        " store requests; a warp storing 32 consecutive floats needs 4, 32 consecutive float4s 16");
  out.look_at.push_back("st.global");
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
  if (r.v[0] > 0) out.look_at.push_back("ld.local");
  if (r.v[1] > 0) out.look_at.push_back("st.local");
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
NcuValue global_loads_per_stored_value(const NcuReading& r) {
  NcuValue out = loads_per_stored_value(r, "global-memory");
  out.look_at = {"ld.global", "ld.global.nc"};
  return out;
}

// Bytes the threads read from shared memory (what their loads asked for) per
// byte their global loads asked of L1 (in 32-byte sectors; a cp.async into
// shared memory counts as a global load here). A tile is filled from global
// memory and read back at least once, so shared bytes outnumber global ones; a
// kernel whose taps come from global memory or from other lanes, with a few
// shared loads for show, reads less from shared memory than from global. A
// launch that read nothing from global memory at all (a tensor-memory copy fills
// its tile) takes its shared bytes as the value.
NcuValue shared_bytes_per_global_byte(const NcuReading& r) {
  const double shared = r.v[0], global = r.v[1];
  const double value = global > 0 ? shared / global : shared;
  NcuValue out = with_summary(value, readable_amount(value), r);
  out.details.push_back(count(shared) + " bytes read from shared memory, " + count(global) +
                        " bytes asked of global memory by loads (cp.async included)");
  if (global == 0 && shared > 0)
    out.details.push_back("no global loads at all: every byte read came from shared memory");
  if (shared == 0) out.details.push_back("the kernel read nothing from shared memory");
  out.look_at = {"ld.global", "ld.global.nc", "ld.shared"};
  return out;
}

// The share of the bytes a kernel's threads read from global memory that a
// given kind of copy brought (the first counter) among all the kinds it read
// by (the rest): what a kernel that must fill its tiles one way does, a copy
// made for show beside loads that do the work shows as a small share.
NcuValue copied_share(const NcuReading& r, const std::string& copy, const std::vector<std::string>& others) {
  double all = 0;
  for (double v : r.v) all += v;
  const double value = ratio(r.v[0], all);
  NcuValue out = with_summary(value, fixed(value, 3), r);
  std::string by = count(r.v[0]) + " bytes by " + copy;
  for (std::size_t i = 1; i < r.v.size(); ++i) by += ", " + count(r.v[i]) + " by " + others[i - 1];
  out.details.push_back(by);
  if (all == 0) out.details.push_back("the kernel read nothing from global memory");
  return out;
}

// cp.async (LDGSTS, global memory straight into shared memory) against loads into registers.
NcuValue async_copied(const NcuReading& r) {
  NcuValue out = copied_share(r, "cp.async", {"loads into registers"});
  if (r.v[1] > 0) out.look_at = {"ld.global", "ld.global.nc"};
  return out;
}

// Bulk copies (the tensor memory accelerator) against loads and cp.async.
NcuValue bulk_copied(const NcuReading& r) {
  NcuValue out = copied_share(r, "bulk copies (the TMA)", {"loads into registers", "cp.async"});
  if (r.v[1] > 0) out.look_at = {"ld.global", "ld.global.nc"};
  if (r.v[2] > 0) out.look_at.push_back("cp.async");
  return out;
}

NcuValue shared_instructions(const NcuReading& r) {
  NcuValue out = with_summary(r.v[0] + r.v[1], count(r.v[0] + r.v[1]), r);
  out.details.push_back(count(r.v[0]) + " shared-memory load and " + count(r.v[1]) + " store instructions (per warp)");
  if (r.v[0] > 0) out.look_at.push_back("ld.shared");
  if (r.v[1] > 0) out.look_at.push_back("st.shared");
  return out;
}

NcuValue non_constant_loads(const NcuReading& r) {
  const double value = (r.v[0] + r.v[1] + r.v[2]) * 32 / r.elements;
  NcuValue out = with_summary(value, readable_amount(value), r);
  out.details.push_back("load instructions (per warp): global " + count(r.v[0]) + ", local " + count(r.v[1]) +
                        ", shared " + count(r.v[2]) + ", over " + count(r.elements) + " output elements");
  if (r.v[0] > 0) out.look_at.insert(out.look_at.end(), {"ld.global", "ld.global.nc"});
  if (r.v[1] > 0) out.look_at.push_back("ld.local");
  if (r.v[2] > 0) out.look_at.push_back("ld.shared");
  return out;
}

}  // namespace

// Long (about 120 lines) on purpose: the table of measures, one entry each,
// every counter a measure needs beside the reason it is asked for.
const std::vector<NcuMeasure>& ncu_measures() {
  static const std::vector<NcuMeasure> m = {
      {"shared_bank_conflicts_per_request",
       "bank conflicts per shared-memory request",
       {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "sm__sass_inst_executed_op_shared_ld.sum",
        "sm__sass_inst_executed_op_shared_st.sum"},
       bank_conflicts,
       Symptom::bank_conflicts},
      {"global_sectors_per_request",
       "32-byte sectors per global-memory request",
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"},
       sectors_per_request,
       Symptom::uncoalesced},
      {"local_memory_bytes",
       "bytes of local-memory traffic",
       {"l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"},
       local_bytes,
       Symptom::local_memory},
      // Stores alone: a warp writing 32 consecutive floats needs 4 sectors, 32
      // consecutive float4s 16 (as coalesced as 16-byte stores get), one row
      // per lane 32. Loads mix in broadcasts (one sector for the whole warp)
      // that hide a strided pattern in an average.
      {"global_store_sectors_per_request",
       "32-byte sectors per global-memory store request",
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"},
       store_sectors_per_request,
       Symptom::uncoalesced},
      // The named kernel did the work: the bytes its stores covered, per output
      // element, over all its launches in the case. A kernel that writes every
      // output element once covers at least the output's size; one launched
      // for show while another kernel or a copy fills the output covers little.
      {"stored_bytes_per_element",
       "bytes stored to global memory per output element",
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"},
       stored_bytes,
       Symptom::not_the_named_kernel,
       NcuMeasure::at_least,
       true},
      // Evidence that shared memory is used when the kernel runs, not only in
      // a branch that never executes: a tile in shared memory is read back by
      // every block that fills it.
      {"shared_loads_per_block",
       "shared-memory loads executed per block",
       {"sm__sass_inst_executed_op_shared_ld.sum"},
       shared_loads_per_block,
       Symptom::memory_space,
       NcuMeasure::at_least},
      // The tile is where the data comes from: per output value a launch
      // stored, the shared-memory loads it executed (per warp, times 32). A
      // 17 x 17 box from a tile with one output per thread executes 289, a
      // matrix product's tile two per multiply-add; a kernel that reads its
      // operands from global memory and touches shared memory for show,
      // about one. A float4 load is one instruction for four values, and a
      // token load is one too, so this count is loose evidence: lab06 keeps it
      // beside shared_bytes_per_global_byte, and lab09 judges its box by the
      // bytes alone.
      {"shared_loads_per_output",
       "shared-memory loads per output value stored",
       {"sm__sass_inst_executed_op_shared_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"},
       shared_loads_per_stored_value,
       Symptom::memory_space,
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
       Symptom::memory_space,
       NcuMeasure::at_most,
       false,
       true},
      // The tile is where the taps come from, in bytes rather than
      // instructions (a float4 or a token load meets a count): bytes read from
      // shared memory per byte global loads asked for. On the H200, lab09's
      // box tiles read 27 to 64 times the bytes from the tile that they load
      // from global memory (docs/measurements/logs/h200-bytes-per-output.log);
      // the plain 17 x 17 box reads none.
      {"shared_bytes_per_global_byte",
       "bytes read from shared memory per byte loaded from global memory",
       {"sm__sass_data_bytes_mem_shared_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"},
       shared_bytes_per_global_byte,
       Symptom::memory_space,
       NcuMeasure::at_least},
      // How the tiles arrive, by the bytes each way of reading global memory
      // brought: cp.async (LDGSTS) against loads into registers, and bulk copies
      // (reads the TMA made) against both. Every byte a thread's load or
      // cp.async asks for counts once (the SASS data bytes, not sectors), so a
      // kernel whose tiles all arrive one way scores 1 and one that makes such
      // a copy for show while its loads do the work scores near 0. Both
      // counters of the first exist on the H200 (gh100), as does the TMA's.
      {"async_copied_fraction",
       "of the bytes it reads from global memory arriving by cp.async",
       {"sm__sass_data_bytes_mem_global_op_ldgsts.sum", "sm__sass_data_bytes_mem_global_op_ld.sum"},
       async_copied,
       Symptom::memory_space,
       NcuMeasure::at_least},
      {"bulk_copied_fraction",
       "of the bytes it reads from global memory arriving by bulk copies",
       {"l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum", "sm__sass_data_bytes_mem_global_op_ld.sum",
        "sm__sass_data_bytes_mem_global_op_ldgsts.sum"},
       bulk_copied,
       Symptom::memory_space,
       NcuMeasure::at_least},
      // No shared memory at all: for a step whose measurement says plain
      // loads win, the kernel's shared-memory loads and stores, per launch.
      {"shared_memory_instructions",
       "shared-memory loads and stores executed",
       {"sm__sass_inst_executed_op_shared_ld.sum", "sm__sass_inst_executed_op_shared_st.sum"},
       shared_instructions,
       Symptom::memory_space},
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
       Symptom::memory_space,
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

}  // namespace grader
