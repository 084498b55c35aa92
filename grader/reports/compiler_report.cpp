#include "compiler_report.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "ptx_internal.hpp"
#include "text.hpp"

namespace grader {
namespace ptx_detail {

bool is_memory_qualifier(const std::string& part) {
  static const std::set<std::string> kQualifiers = {"weak", "volatile", "relaxed", "acquire", "release",
                                                    "mmio", "cta",      "cluster", "gpu",     "sys"};
  return kQualifiers.count(part) > 0;
}

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

std::vector<std::string> split_dots(const std::string& op) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= op.size(); ++i) {
    if (i == op.size() || op[i] == '.') {
      parts.push_back(op.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

// "ld.volatile.shared.f32" -> "ld.shared.f32": the memory space, not the
// ordering, is what a check asks about (volatile shared loads are common in
// warp reductions).
std::string normalize_opcode(const std::string& op) {
  if (!starts_with(op, "ld.") && !starts_with(op, "st.") && !starts_with(op, "ldu.")) return op;
  const auto parts = split_dots(op);
  // ldu (a load the warp shares) reads memory as ld does: the same classes.
  std::string out = parts[0] == "ldu" ? "ld" : parts[0];
  std::size_t i = 1;
  while (i < parts.size() && is_memory_qualifier(parts[i])) ++i;
  for (; i < parts.size(); ++i) out += "." + parts[i];
  return out;
}

}  // namespace ptx_detail

namespace {

using namespace ptx_detail;

// ---- PTX ---------------------------------------------------------------

// Comments go, line breaks stay (so directives that end at the line still do).
std::string strip_comments(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const auto end = text.find('"', i + 1);
      const auto stop = end == std::string::npos ? text.size() : end + 1;
      out.append(text, i, stop - i);
      i = stop - 1;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
      out += '\n';
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const auto end = text.find("*/", i + 2);
      const auto stop = end == std::string::npos ? text.size() : end;
      out.append(std::count(text.begin() + i, text.begin() + stop, '\n'), '\n');
      i = end == std::string::npos ? text.size() : end + 1;
    } else {
      out += c;
    }
  }
  return out;
}

std::size_t matching_close(const std::string& s, std::size_t open, char open_c, char close_c) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == open_c) ++depth;
    if (s[i] == close_c && --depth == 0) return i;
  }
  return s.size();
}

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Identifiers an instruction's operands name: registers (%r1, %ctaid.x) and
// numbers (0f3F800000) are skipped, symbols (dev_arr, _Z6helperPfi) kept.
void collect_symbols(const std::string& operands, std::set<std::string>& out) {
  for (std::size_t i = 0; i < operands.size();) {
    const char c = operands[i];
    if (!is_ident_char(c)) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < operands.size() && is_ident_char(operands[j])) ++j;
    const bool is_register = i > 0 && (operands[i - 1] == '%' || operands[i - 1] == '.');
    if (!is_register && !std::isdigit(static_cast<unsigned char>(c))) out.insert(operands.substr(i, j - i));
    i = j;
  }
}

// ".loc 1 17 5" or ".loc 1 17 5, function_name $L__info_string0, inlined_at 1 30 10".
PtxLocation parse_loc(const std::string& directive) {
  PtxLocation at;
  std::istringstream in(directive.substr(4));
  in >> at.file >> at.line;
  if (!in) return {};
  const auto inlined = directive.find("inlined_at");
  if (inlined != std::string::npos) {
    std::istringstream rest(directive.substr(inlined + 10));
    rest >> at.inlined_at_file >> at.inlined_at_line;
    if (!rest) at.inlined_at_file = at.inlined_at_line = 0;
  }
  return at;
}

// A body is ';'-terminated statements among braces, labels and directives;
// only .loc lines end without a ';': given one, each is a statement too, and
// says where the instructions after it came from.
void parse_body(const std::string& body, PtxFunction& fn) {
  std::string text;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    const std::string t = trim(line);
    if (starts_with(t, ".loc"))
      text += t + ";\n";
    else if (!starts_with(t, ".file"))
      text += line + '\n';
  }
  PtxLocation at;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    std::string stmt = text.substr(start, end - start);
    start = end + 1;
    for (bool stripped = true; stripped;) {
      stmt = trim(stmt);
      stripped = false;
      if (!stmt.empty() && (stmt[0] == '{' || stmt[0] == '}')) {
        stmt.erase(0, 1);
        stripped = true;
        continue;
      }
      std::size_t k = 0;
      while (k < stmt.size() && is_ident_char(stmt[k])) ++k;
      if (k > 0 && k < stmt.size() && stmt[k] == ':' && (k + 1 == stmt.size() || stmt[k + 1] != ':')) {
        stmt.erase(0, k + 1);  // a label
        stripped = true;
      }
    }
    if (starts_with(stmt, ".loc")) at = parse_loc(stmt);
    if (stmt.empty() || stmt[0] == '.') continue;
    if (stmt[0] == '@') {  // predicate guard, e.g. "@%p1 bra $L__BB0_2"
      const auto ws = stmt.find_first_of(" \t\n");
      if (ws == std::string::npos) continue;
      stmt = trim(stmt.substr(ws));
    }
    const auto ws = stmt.find_first_of(" \t\n");
    fn.instructions.push_back(stmt.substr(0, ws));
    fn.locations.push_back(at);
    fn.statements.push_back({stmt.substr(0, ws), ws == std::string::npos ? "" : trim(stmt.substr(ws))});
    if (ws != std::string::npos) collect_symbols(stmt.substr(ws), fn.symbols);
  }
}

// The name after .entry/.func, past .func's optional "(return value)".
std::string function_name(const std::string& header, std::size_t keyword_end) {
  std::size_t i = header.find_first_not_of(" \t\r\n", keyword_end);
  if (i != std::string::npos && header[i] == '(') {
    i = matching_close(header, i, '(', ')');
    i = header.find_first_not_of(" \t\r\n", i + 1);
  }
  if (i == std::string::npos) return "";
  std::size_t j = i;
  while (j < header.size() && (is_ident_char(header[j]) || header[j] == '.')) ++j;
  return header.substr(i, j - i);
}

struct ModuleVariable {
  std::string ptx_name;
  enum Space { kGlobal, kConst, kExternShared } space;
  bool is_array = false;  // "name[N]": an array, not a scalar such as a counter or a pointer
};

// '.file 1 "/path/kernel.cu"', perhaps with ", timestamp, size" after the name.
void parse_file_entry(const std::string& line, std::map<int, std::string>& files) {
  std::istringstream in(line.substr(5));
  int index = 0;
  if (!(in >> index)) return;
  const auto open = line.find('"');
  const auto close = open == std::string::npos ? open : line.find('"', open + 1);
  if (close != std::string::npos) files[index] = line.substr(open + 1, close - open - 1);
}

// A module-scope declaration, e.g. ".global .align 4 .b8 dev_arr[4096]".
void parse_declaration(const std::string& header, std::vector<ModuleVariable>& vars) {
  const auto words = split_ws(header.substr(0, header.find('=')));
  if (words.empty()) return;
  const auto has = [&](const char* w) { return std::find(words.begin(), words.end(), w) != words.end(); };
  if (has(".func") || has(".entry")) return;  // a prototype
  const std::string name = words.back().substr(0, words.back().find('['));
  // Compiler-made tables (printf's "$str", libdevice's "__cudart_...") are not the student's.
  if (starts_with(name, "$") || starts_with(name, "__")) return;
  const bool is_array = words.back().find('[') != std::string::npos;
  if (has(".global"))
    vars.push_back({name, ModuleVariable::kGlobal, is_array});
  else if (has(".const"))
    vars.push_back({name, ModuleVariable::kConst, is_array});
  else if (has(".shared") && has(".extern"))
    vars.push_back({name, ModuleVariable::kExternShared, is_array});
}

bool extends(const std::string& op, const std::string& cls) {
  if (!starts_with(op, cls)) return false;
  return op.size() == cls.size() || op[cls.size()] == '.' || op.compare(cls.size(), 2, "::") == 0;
}

// bar.sync, barrier.sync and their .cta forms; also bar.red (__syncthreads_count,
// _and, _or), which every thread of the block waits at as it does at bar.sync.
// bar.arrive waits for nobody and is not one.
bool is_barrier_sync(const std::string& op) {
  const auto parts = split_dots(op);
  if (parts[0] != "bar" && parts[0] != "barrier") return false;
  std::size_t i = 1;
  if (i < parts.size() && parts[i] == "cta") ++i;
  return i < parts.size() && (parts[i] == "sync" || parts[i] == "red");
}

bool is_state_space(const std::string& part) {
  static const std::set<std::string> kSpaces = {"global", "shared", "local", "const", "param", "tex"};
  return kSpaces.count(part.substr(0, part.find("::"))) > 0;
}

// "ld.f32", "ld.v4.u32", "st.b64": a load or store through a generic pointer,
// whose state space the hardware resolves at run time.
bool is_generic_access(const std::string& op, const char* verb) {
  const auto parts = split_dots(op);
  return parts.size() > 1 && parts[0] == verb && !is_state_space(parts[1]);
}

// Any instruction that names shared memory: ld/st/atom/red.shared, the address
// conversions cvta(.to).shared, copies into shared memory (cp.async ... .shared),
// ldmatrix, mbarrier and the rest.
bool names_shared_memory(const std::string& op) {
  for (const auto& part : split_dots(op))
    if (part.rfind("shared", 0) == 0) return true;
  return false;
}

// An asynchronous copy from global into shared memory: cp.async (sm_80), cp.async.bulk
// and cp.async.bulk.tensor (sm_90, the tensor memory accelerator). The destination's
// space comes first, then the source's.
bool is_async_copy_into_shared(const std::string& op) {
  if (!starts_with(op, "cp.async.")) return false;
  std::vector<std::string> spaces;
  for (const auto& part : split_dots(op))
    if (is_state_space(part)) spaces.push_back(part.substr(0, part.find("::")));
  return spaces.size() >= 2 && spaces[0] == "shared" && spaces[1] == "global";
}

// A wait that can leave copies in flight: every cp.async group but the N
// newest (N >= 1), or one mbarrier's phase, which only the copies that complete
// on that barrier finish. The count is cp.async.wait_group's immediate operand.
bool is_partial_wait(const std::string& op, const std::string& operands) {
  if (starts_with(op, "mbarrier.test_wait") || starts_with(op, "mbarrier.try_wait")) return true;
  if (op != "cp.async.wait_group") return false;
  const std::string n = trim(operands.substr(0, operands.find(';')));
  return !n.empty() &&
         std::all_of(n.begin(), n.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
         std::stol(n) >= 1;
}

// The state space an atomic names ("global", "shared"), or "" through a generic
// pointer; nothing for an instruction that is not an atomic.
std::optional<std::string> atomic_space(const std::string& op) {
  const auto parts = split_dots(op);
  if (parts[0] != "atom") return std::nullopt;
  std::size_t i = 1;
  while (i < parts.size() && is_memory_qualifier(parts[i])) ++i;
  return i < parts.size() && is_state_space(parts[i]) ? parts[i].substr(0, parts[i].find("::")) : "";
}

// A class is what an instruction does to memory, whatever the instruction: an
// asynchronous copy into shared memory writes the tile as st.shared does and reads
// global memory as ld.global does; an atomic reads what it changes (so a kernel
// that may not read an array cannot read it with atomicAdd(p, 0)); ldmatrix reads
// shared memory.
bool matches(const std::string& opcode, const std::string& cls) {
  if (cls == "bar.sync") return is_barrier_sync(opcode);
  const std::string op = normalize_opcode(opcode);
  if (cls == "ld.generic") return is_generic_access(op, "ld") || atomic_space(op) == "";
  if (cls == "st.generic") return is_generic_access(op, "st");
  if (cls == "shared") return names_shared_memory(op);
  // The copies themselves: their commits, waits and arrivals share the prefix.
  if (cls == "cp.async") return is_async_copy_into_shared(op) && !extends(op, "cp.async.bulk");
  if (cls == "cp.async.bulk") return is_async_copy_into_shared(op) && extends(op, "cp.async.bulk");
  if (cls == "st.shared" && is_async_copy_into_shared(op)) return true;
  if (cls == "ld.global" && (is_async_copy_into_shared(op) || atomic_space(op) == "global")) return true;
  if (cls == "ld.shared" && starts_with(op, "ldmatrix.")) return true;
  // The texture path is every read through the texture unit: a fetch, a gather
  // (tex2Dgather), a surface read. None of them is a global load to ncu's LSU counters.
  if (cls == "tex") return extends(op, "tex") || extends(op, "tld4") || extends(op, "suld");
  if (!extends(op, cls)) return false;
  return !(cls == "ld.global" && extends(op, "ld.global.nc"));
}

template <typename T>
void append_unique(std::vector<T>& to, const T& value) {
  if (std::find(to.begin(), to.end(), value) == to.end()) to.push_back(value);
}

}  // namespace

// Long (about 95 lines) on purpose: one pass over the PTX text, whose state
// (the function being read, its braces, its parameters) every line updates;
// split, that state would travel through every piece.
PtxModule parse_ptx(const std::string& text) {
  const std::string src = strip_comments(text);
  std::vector<PtxFunction> functions;
  std::vector<ModuleVariable> variables;
  std::map<int, std::string> files;

  std::size_t i = 0;
  while ((i = src.find_first_not_of(" \t\r\n", i)) != std::string::npos) {
    const std::string word = src.substr(i, src.find_first_of(" \t\r\n", i) - i);
    if (word == ".version" || word == ".target" || word == ".address_size" || word == ".file") {
      const auto end = src.find('\n', i);  // these end at the line, without a ';'
      if (word == ".file") parse_file_entry(src.substr(i, end == std::string::npos ? end : end - i), files);
      i = end;
      continue;
    }
    std::size_t j = i;
    for (int paren = 0; j < src.size(); ++j) {
      if (src[j] == '(') ++paren;
      if (src[j] == ')') --paren;
      if (paren == 0 && (src[j] == ';' || src[j] == '{')) break;
    }
    const std::string header = src.substr(i, j - i);
    if (j == src.size()) break;
    if (src[j] == ';') {
      parse_declaration(header, variables);
      i = j + 1;
      continue;
    }
    const std::size_t close = matching_close(src, j, '{', '}');
    const auto words = split_ws(header);
    const auto entry = std::find(words.begin(), words.end(), ".entry") != words.end();
    const auto func = std::find(words.begin(), words.end(), ".func") != words.end();
    if (entry || func) {
      const auto keyword = header.find(entry ? ".entry" : ".func");
      PtxFunction fn;
      fn.mangled = function_name(header, keyword + (entry ? 6 : 5));
      fn.is_entry = entry;
      parse_body(src.substr(j + 1, close - j - 1), fn);
      functions.push_back(std::move(fn));
      i = close + 1;
    } else if (header.find('=') != std::string::npos) {  // an initializer: "= {1, 2}"
      parse_declaration(header, variables);
      i = src.find(';', close);
      if (i != std::string::npos) ++i;
    } else {  // e.g. ".section .debug_str { ... }"
      i = close + 1;
    }
  }

  PtxModule module;
  module.files = std::move(files);
  std::map<std::string, const ModuleVariable*> variable_by_ptx_name;
  for (const auto& v : variables) {
    variable_by_ptx_name[v.ptx_name] = &v;
    auto& list = v.space == ModuleVariable::kGlobal  ? module.global_variables
                 : v.space == ModuleVariable::kConst ? module.const_variables
                                                     : module.extern_shared;
    append_unique(list, demangle_kernel_name(v.ptx_name));
  }
  std::map<std::string, const PtxFunction*> function_by_name;
  for (const auto& fn : functions) function_by_name.emplace(fn.mangled, &fn);
  std::set<std::string> global_arrays;  // a scalar counter or a kept pointer is not a __device__ array
  for (const auto& v : variables)
    if (v.space == ModuleVariable::kGlobal && v.is_array) global_arrays.insert(v.ptx_name);

  for (const auto& fn : functions) {
    if (!fn.is_entry) continue;
    PtxKernel k;
    k.mangled = fn.mangled;
    k.name = demangle_kernel_name(fn.mangled);
    append_unique(module.entries, fn.mangled);
    // Breadth-first over calls, each device function once (recursion ends).
    std::vector<const PtxFunction*> reached = {&fn};
    std::set<std::string> seen = {fn.mangled};
    for (std::size_t r = 0; r < reached.size(); ++r) {
      const PtxFunction& f = *reached[r];
      k.instructions.insert(k.instructions.end(), f.instructions.begin(), f.instructions.end());
      k.locations.insert(k.locations.end(), f.locations.begin(), f.locations.end());
      for (const auto& st : f.statements) k.operands.push_back(st.operands);
      const AddressUse use = trace_addresses(f, global_arrays);
      for (const auto& v : use.arrays) append_unique(k.accessed_global_variables, demangle_kernel_name(v));
      k.pointer_accesses += use.pointer_accesses;
      k.pointer_access_locations.insert(k.pointer_access_locations.end(), use.pointer_access_locations.begin(),
                                        use.pointer_access_locations.end());
      for (const auto& sym : f.symbols) {
        if (auto v = variable_by_ptx_name.find(sym); v != variable_by_ptx_name.end()) {
          append_unique(k.variables, demangle_kernel_name(sym));
          if (v->second->space == ModuleVariable::kExternShared) k.uses_extern_shared = true;
        }
        auto callee = function_by_name.find(sym);
        if (callee != function_by_name.end() && !callee->second->is_entry && seen.insert(sym).second)
          reached.push_back(callee->second);
      }
    }
    auto [it, inserted] = module.kernels.emplace(k.name, k);
    if (!inserted) {
      auto& into = it->second;
      into.instructions.insert(into.instructions.end(), k.instructions.begin(), k.instructions.end());
      into.locations.insert(into.locations.end(), k.locations.begin(), k.locations.end());
      into.operands.insert(into.operands.end(), k.operands.begin(), k.operands.end());
      for (const auto& v : k.variables) append_unique(into.variables, v);
      for (const auto& v : k.accessed_global_variables) append_unique(into.accessed_global_variables, v);
      into.pointer_accesses += k.pointer_accesses;
      into.pointer_access_locations.insert(into.pointer_access_locations.end(), k.pointer_access_locations.begin(),
                                           k.pointer_access_locations.end());
      into.uses_extern_shared = into.uses_extern_shared || k.uses_extern_shared;
    }
  }
  return module;
}

const std::vector<std::string>& known_instruction_classes() {
  static const std::vector<std::string> kClasses = {
      "ld.shared", "st.shared",     "bar.sync",   "ld.global.nc", "ld.const", "ld.local",
      "st.local",  "tex",           "ld.global",  "st.global",    "atom",     "red",
      "shfl",      "extern_shared", "ld.generic", "st.generic",   "shared",   "pointer_access",
      "cp.async",  "cp.async.bulk", "mbarrier",   "partial_wait"};
  return kClasses;
}

bool has_instruction(const PtxKernel& kernel, const std::string& instruction_class) {
  return count_instruction(kernel, instruction_class) > 0;
}

int count_instruction(const PtxKernel& kernel, const std::string& instruction_class) {
  if (instruction_class == "extern_shared") return kernel.uses_extern_shared ? 1 : 0;
  if (instruction_class == "pointer_access") return kernel.pointer_accesses;
  if (instruction_class == "partial_wait") {
    int n = 0;
    for (std::size_t i = 0; i < kernel.instructions.size(); ++i)
      n += is_partial_wait(kernel.instructions[i], i < kernel.operands.size() ? kernel.operands[i] : "");
    return n;
  }
  if (instruction_class == "shared" && kernel.uses_extern_shared &&
      std::none_of(kernel.instructions.begin(), kernel.instructions.end(),
                   [](const std::string& op) { return matches(op, "shared"); }))
    return 1;
  return static_cast<int>(std::count_if(kernel.instructions.begin(), kernel.instructions.end(),
                                        [&](const std::string& op) { return matches(op, instruction_class); }));
}

namespace {
// The lines of `file_name` that the kernel's instructions matching `wanted` came from (see source_lines_of).
template <typename Wanted>
std::vector<int> lines_in_file(const PtxModule& module, const PtxKernel& kernel, const std::string& file_name,
                               bool with_pointer_accesses, Wanted wanted) {
  std::set<int> named;  // the .file indices of that file
  for (const auto& [index, path] : module.files)
    if (path == file_name || (path.size() > file_name.size() && path.compare(path.size() - file_name.size() - 1,
                                                                             std::string::npos, "/" + file_name) == 0))
      named.insert(index);
  std::set<int> lines;
  const auto add = [&](const PtxLocation& at) {
    if (named.count(at.file) && at.line > 0)
      lines.insert(at.line);
    else if (named.count(at.inlined_at_file) && at.inlined_at_line > 0)
      lines.insert(at.inlined_at_line);
  };
  if (with_pointer_accesses)
    for (const auto& at : kernel.pointer_access_locations) add(at);
  for (std::size_t i = 0; i < kernel.instructions.size() && i < kernel.locations.size(); ++i)
    if (wanted(kernel.instructions[i])) add(kernel.locations[i]);
  return {lines.begin(), lines.end()};
}
}  // namespace

std::vector<int> source_lines_of(const PtxModule& module, const PtxKernel& kernel, const std::string& instruction_class,
                                 const std::string& file_name) {
  return lines_in_file(module, kernel, file_name, instruction_class == "pointer_access",
                       [&](const std::string& opcode) { return matches(opcode, instruction_class); });
}

std::vector<int> kernel_lines_of(const PtxModule& module, const PtxKernel& kernel, const std::string& file_name) {
  return lines_in_file(module, kernel, file_name, false, [](const std::string&) { return true; });
}

}  // namespace grader
