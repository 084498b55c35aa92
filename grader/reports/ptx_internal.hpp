// What the PTX parser (compiler_report.cpp) and its address tracing
// (ptx_dataflow.cpp) share: one function of a module as parsed, and the
// opcode helpers both need. Private to those files.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler_report.hpp"

namespace grader::ptx_detail {

struct PtxFunction {
  std::string mangled;
  bool is_entry = false;
  std::vector<std::string> instructions;
  std::vector<PtxStatement> statements;  // the same, with their operands
  std::vector<PtxLocation> locations;    // the same, where each came from
  std::set<std::string> symbols;
};

bool is_ident_char(char c);
// "ld.shared::cta.f32" -> {"ld", "shared::cta", "f32"}.
std::vector<std::string> split_dots(const std::string& op);
// "ld.volatile.shared.f32" -> "ld.shared.f32": the memory space, not the ordering.
std::string normalize_opcode(const std::string& op);

// What a function's loads and stores reach, each address traced back to where
// it was made.
struct AddressUse {
  std::set<std::string> arrays;  // module-scope arrays loaded from or stored to through their own address
  int pointer_accesses = 0;      // loads and stores through a pointer handed in or read from memory
  std::vector<PtxLocation> pointer_access_locations;  // where each of those came from
};
AddressUse trace_addresses(const PtxFunction& fn, const std::set<std::string>& arrays);

}  // namespace grader::ptx_detail
