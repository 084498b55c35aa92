// ptxas' per-kernel resource report (-Xptxas -v) and kernel names as the
// compiler mangles them: the half of compiler_report.hpp that is not PTX.
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>

#include "compiler_report.hpp"
#include "text.hpp"

namespace grader {
namespace {

void merge_max(KernelResources& into, const KernelResources& from) {
  into.registers = std::max(into.registers, from.registers);
  into.stack_frame = std::max(into.stack_frame, from.stack_frame);
  into.spill_stores = std::max(into.spill_stores, from.spill_stores);
  into.spill_loads = std::max(into.spill_loads, from.spill_loads);
  into.shared_bytes = std::max(into.shared_bytes, from.shared_bytes);
  into.barriers = std::max(into.barriers, from.barriers);
  for (const auto& [bank, bytes] : from.cmem) into.cmem[bank] = std::max(into.cmem[bank], bytes);
}

int first_int(const std::string& s, const std::regex& re) {
  std::smatch m;
  return std::regex_search(s, m, re) ? std::stoi(m[1]) : 0;
}

}  // namespace

std::map<std::string, KernelResources> parse_ptxas_report(const std::string& text) {
  static const std::regex kEntry(R"(Compiling entry function '([^']+)')");
  static const std::regex kProperties(R"(Function properties for (\S+))");
  static const std::regex kStack(R"((\d+) bytes stack frame)");
  static const std::regex kSpillStores(R"((\d+) bytes spill stores)");
  static const std::regex kSpillLoads(R"((\d+) bytes spill loads)");
  static const std::regex kRegisters(R"(Used (\d+) registers)");
  static const std::regex kBarriers(R"(used (\d+) barriers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kCmem(R"((\d+) bytes cmem\[(\d+)\])");

  std::vector<KernelResources> compiled;
  // The entry the next properties and "Used" lines describe; none while ptxas
  // talks about a device function.
  KernelResources* current = nullptr;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    // ptxas' lines are short; a huge one is other output, and would send
    // std::regex's recursive matcher through the stack.
    if (line.size() > 1000) continue;
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      compiled.emplace_back();
      compiled.back().mangled = m[1];
      current = &compiled.back();
    } else if (std::regex_search(line, m, kProperties)) {
      if (current && current->mangled != m[1].str()) current = nullptr;
    } else if (!current) {
      continue;
    } else if (std::regex_search(line, kStack)) {
      current->stack_frame = first_int(line, kStack);
      current->spill_stores = first_int(line, kSpillStores);
      current->spill_loads = first_int(line, kSpillLoads);
    } else if (std::regex_search(line, kRegisters)) {
      current->registers = first_int(line, kRegisters);
      current->barriers = first_int(line, kBarriers);
      current->shared_bytes = first_int(line, kSmem);
      for (std::sregex_iterator it(line.begin(), line.end(), kCmem), end; it != end; ++it)
        current->cmem[std::stoi((*it)[2])] = std::stoi((*it)[1]);
    }
  }

  std::map<std::string, KernelResources> out;
  for (auto& k : compiled) {
    k.name = demangle_kernel_name(k.mangled);
    auto [it, inserted] = out.emplace(k.name, k);
    if (!inserted) merge_max(it->second, k);
  }
  return out;
}

std::string demangle_kernel_name(const std::string& mangled) {
  if (!starts_with(mangled, "_Z")) return mangled;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> raw(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                             std::free);
  if (status != 0 || !raw) return mangled;
  std::string s = raw.get();

  // The parameter list is the parenthesised group that ends the name.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (std::size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      if (s[i] == '(' && --depth == 0) {
        s.erase(i);
        break;
      }
    }
  }
  std::string no_templates;
  int angle = 0;
  for (char c : s) {
    if (c == '<')
      ++angle;
    else if (c == '>')
      --angle;
    else if (angle == 0)
      no_templates += c;
  }
  // A template's demangled name starts with its return type ("void ns::k"); the
  // name is the last word outside parentheses ("(anonymous namespace)::k").
  std::size_t start = 0;
  int paren = 0;
  for (std::size_t i = 0; i < no_templates.size(); ++i) {
    if (no_templates[i] == '(') ++paren;
    if (no_templates[i] == ')') --paren;
    if (no_templates[i] == ' ' && paren == 0) start = i + 1;
  }
  return no_templates.substr(start);
}

}  // namespace grader
