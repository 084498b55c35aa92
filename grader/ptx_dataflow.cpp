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

}  // namespace

// Which of `globals` the function loads from or stores to: an address register
// is traced back, through any arithmetic (mov, cvta, add, mad ...), to the
// variable's own address. A loaded value carries nothing on, so a pointer kept
// in a __device__ variable does not make the memory it points to a __device__
// array. Control flow is ignored, and a few passes carry addresses around loops.
std::set<std::string> accessed_variables(const PtxFunction& fn, const std::set<std::string>& globals) {
  std::map<std::string, std::set<std::string>> points_into;  // register -> variables
  std::set<std::string> accessed;
  const auto variables_of = [&](const std::string& operand) {
    std::set<std::string> registers, symbols, out;
    names_in(operand, registers, symbols);
    for (const auto& s : symbols)
      if (globals.count(s)) out.insert(s);
    for (const auto& r : registers)
      if (auto it = points_into.find(r); it != points_into.end()) out.insert(it->second.begin(), it->second.end());
    return out;
  };
  for (int pass = 0; pass < 4; ++pass) {
    for (const auto& st : fn.statements) {
      const auto ops = split_operands(st.operands);
      if (ops.empty()) continue;
      if (is_memory_access(st.opcode)) {
        if (moves_data(st.opcode))
          for (const auto& op : ops)
            if (!op.empty() && op[0] == '[')
              for (const auto& v : variables_of(op)) accessed.insert(v);
        continue;
      }
      if (ops[0].empty() || ops[0][0] != '%') continue;
      std::set<std::string> from;
      for (std::size_t i = 1; i < ops.size(); ++i)
        for (const auto& v : variables_of(ops[i])) from.insert(v);
      if (!from.empty()) points_into[ops[0]].insert(from.begin(), from.end());
    }
  }
  return accessed;
}

// Loads and stores through a pointer the function was handed (a 64-bit
// parameter) or read from memory (a 64-bit load), traced through any
// arithmetic like accessed_variables: memory that is not a module-scope
// array's own, whatever it is. Shared, local and parameter accesses are the
// kernel's own workspace and do not count.
int pointer_accesses(const PtxFunction& fn) {
  std::set<std::string> pointers;
  const auto from_pointer = [&](const std::string& operand) {
    std::set<std::string> registers, symbols;
    names_in(operand, registers, symbols);
    return std::any_of(registers.begin(), registers.end(), [&](const std::string& r) { return pointers.count(r) > 0; });
  };
  const auto is_wide = [](const std::string& opcode) {
    return opcode.find(".u64") != std::string::npos || opcode.find(".b64") != std::string::npos ||
           opcode.find(".s64") != std::string::npos;
  };
  int count = 0;
  for (int pass = 0; pass < 4; ++pass) {
    count = 0;
    for (const auto& st : fn.statements) {
      const auto ops = split_operands(st.operands);
      if (ops.empty()) continue;
      if (is_memory_access(st.opcode)) {
        const auto parts = split_dots(normalize_opcode(st.opcode));
        const std::string space = parts.size() > 1 ? parts[1].substr(0, parts[1].find("::")) : "";
        const bool own_workspace = space == "shared" || space == "local" || space == "param" || space == "const";
        if (moves_data(st.opcode) && !own_workspace)
          for (const auto& op : ops)
            if (!op.empty() && op[0] == '[' && from_pointer(op)) ++count;
        // A 64-bit value loaded (a parameter, or from memory) may be a pointer.
        if (starts_with(st.opcode, "ld") && is_wide(st.opcode) && !ops[0].empty() && ops[0][0] == '%' &&
            space != "shared" && space != "local")
          pointers.insert(ops[0]);
        continue;
      }
      if (ops[0].empty() || ops[0][0] != '%') continue;
      for (std::size_t i = 1; i < ops.size(); ++i)
        if (from_pointer(ops[i])) {
          pointers.insert(ops[0]);
          break;
        }
    }
  }
  return count;
}

}  // namespace grader::ptx_detail
