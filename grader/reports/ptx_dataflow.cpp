// Address tracing in a PTX function: which memory its loads and stores reach,
// followed from where each address register was made (compiler_report.hpp's
// global_variable and pointer_access classes).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ptx_internal.hpp"
#include "text.hpp"

namespace grader::ptx_detail {
namespace {

// Splits operands at the commas between them, not those inside {...} or [...].
std::vector<std::string> split_operands(const std::string& operands) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : operands) {
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

// Registers (%rd4) and symbols (g_a) an operand names.
void names_in(const std::string& operand, std::set<std::string>& registers, std::set<std::string>& symbols) {
  for (std::size_t i = 0; i < operand.size();) {
    if (operand[i] == '%') {
      std::size_t j = i + 1;
      while (j < operand.size() && (is_ident_char(operand[j]) || operand[j] == '.')) ++j;
      registers.insert(operand.substr(i, j - i));
      i = j;
    } else if (is_ident_char(operand[i]) && !std::isdigit(static_cast<unsigned char>(operand[i]))) {
      std::size_t j = i;
      while (j < operand.size() && is_ident_char(operand[j])) ++j;
      symbols.insert(operand.substr(i, j - i));
      i = j;
    } else {
      ++i;
    }
  }
}

bool is_memory_access(const std::string& opcode) {
  for (const char* verb : {"ld.", "st.", "atom.", "red.", "ldu."})
    if (starts_with(opcode, verb)) return true;
  return false;
}

// Data moved by a load or a store; an atomic on a counter moves none.
bool moves_data(const std::string& opcode) {
  return starts_with(opcode, "ld.") || starts_with(opcode, "st.") || starts_with(opcode, "ldu.");
}

// Where an address register came from: a module array's own address (its
// name) or a pointer the function was handed or read from memory (kPointer).
const std::string kPointer = "*";

bool is_wide(const std::string& opcode) {
  return opcode.find(".u64") != std::string::npos || opcode.find(".b64") != std::string::npos ||
         opcode.find(".s64") != std::string::npos;
}

// "ld.global.f32" -> "global"; "" for a generic access.
std::string space_of(const std::string& opcode) {
  const auto parts = split_dots(normalize_opcode(opcode));
  return parts.size() > 1 ? parts[1].substr(0, parts[1].find("::")) : "";
}

}  // namespace

// Each register's origins are traced through any arithmetic (mov, cvta, add,
// mad ...). A value loaded from memory carries no array on (a pointer kept in
// a __device__ variable does not make what it points to a __device__ array);
// a 64-bit one (a parameter, or read from memory) may be a pointer. Control
// flow is ignored: passes repeat until no register gains an origin, which
// carries addresses around loops.
AddressUse trace_addresses(const PtxFunction& fn, const std::set<std::string>& arrays) {
  std::map<std::string, std::set<std::string>> origins;  // register -> array names and kPointer
  const auto origins_of = [&](const std::string& operand) {
    std::set<std::string> registers, symbols, out;
    names_in(operand, registers, symbols);
    for (const auto& s : symbols)
      if (arrays.count(s)) out.insert(s);
    for (const auto& r : registers)
      if (auto it = origins.find(r); it != origins.end()) out.insert(it->second.begin(), it->second.end());
    return out;
  };
  const auto add = [&](const std::string& reg, const std::set<std::string>& from) {
    auto& to = origins[reg];
    const std::size_t before = to.size();
    to.insert(from.begin(), from.end());
    return to.size() != before;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& st : fn.statements) {
      const auto ops = split_operands(st.operands);
      if (ops.empty() || ops[0].empty() || ops[0][0] != '%') continue;
      if (is_memory_access(st.opcode)) {
        const std::string space = space_of(st.opcode);
        if (starts_with(st.opcode, "ld") && is_wide(st.opcode) && space != "shared" && space != "local")
          changed |= add(ops[0], {kPointer});
        continue;
      }
      std::set<std::string> from;
      for (std::size_t i = 1; i < ops.size(); ++i)
        for (const auto& o : origins_of(ops[i])) from.insert(o);
      if (!from.empty()) changed |= add(ops[0], from);
    }
  }
  AddressUse use;
  for (std::size_t i = 0; i < fn.statements.size(); ++i) {
    const PtxStatement& st = fn.statements[i];
    if (!is_memory_access(st.opcode) || !moves_data(st.opcode)) continue;
    const std::string space = space_of(st.opcode);
    // Shared, local, constant and parameter memory are the kernel's own workspace.
    const bool own_workspace = space == "shared" || space == "local" || space == "param" || space == "const";
    for (const auto& op : split_operands(st.operands)) {
      if (op.empty() || op[0] != '[') continue;
      const auto from = origins_of(op);
      for (const auto& o : from)
        if (o != kPointer) use.arrays.insert(o);
      if (from.count(kPointer) && !own_workspace) {
        ++use.pointer_accesses;
        if (i < fn.locations.size()) use.pointer_access_locations.push_back(fn.locations[i]);
      }
    }
  }
  return use;
}

}  // namespace grader::ptx_detail
