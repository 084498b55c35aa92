// The checks that read the compiler's own evidence: the PTX (check_ptx) and
// ptxas' resource report (check_ptxas). They need no GPU.
#include <algorithm>
#include <map>
#include <sstream>

#include "lab_grader.hpp"
#include "printable.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {

namespace {

// What a failed ptx check means for the student's code: a sentence for each
// missing class that needs one, and for each forbidden class present.
std::vector<std::string> ptx_failure_details(const Check& c, const PtxModule& ptx,
                                             const std::vector<std::string>& missing,
                                             const std::vector<std::string>& forbidden_present) {
  std::vector<std::string> out;
  const auto lacks = [&](const char* cls) { return std::find(missing.begin(), missing.end(), cls) != missing.end(); };
  if (lacks("ld.shared")) out.push_back("the kernel does not read shared memory yet");
  if (lacks("bar.sync"))
    out.push_back("no __syncthreads(): threads would read shared memory that other threads have not written yet");
  if (lacks("cp.async"))
    out.push_back("no asynchronous copy into shared memory: the tile still passes through registers (or is not there)");
  if (lacks("cp.async.bulk")) out.push_back("no bulk copy (cp.async.bulk): the tile's rows do not come by the TMA yet");
  if (lacks("mbarrier")) out.push_back("no mbarrier: nothing for the bulk copies to complete on");
  if (lacks("partial_wait"))
    out.push_back(
        "every wait for the copies waits for all of them (cp.async.wait_group 0 or wait_all): the next "
        "strip's copies are never in flight while the block computes");
  if (lacks("global_variable"))
    out.push_back(ptx.global_variables.empty()
                      ? "the module declares no __device__ array"
                      : c.kernel + " never reads or writes a __device__ array through its own address (declared: " +
                            join(ptx.global_variables, ", ") + ")");
  static const std::map<std::string, std::string> kForbidden = {
      {"pointer_access",
       "it loads or stores through a pointer it was handed or read from memory: read and write "
       "the __device__ arrays by name in the kernel"},
      {"shared", "it uses shared memory: the step asks for the data in registers"},
      {"ld.generic", "it loads through a generic pointer (ld with no state space), which may read any memory"},
      {"st.generic", "it stores through a generic pointer (st with no state space)"},
  };
  for (const auto& cls : forbidden_present)
    if (auto it = kForbidden.find(cls); it != kForbidden.end()) out.push_back(c.kernel + ": " + it->second);
  return out;
}

// The instruction classes a kernel has where a missing class belongs: the plain load a
// read-only one replaces, a tile written and read with no barrier between, the global
// accesses a missing tile would stage, the pointer accesses instead of a __device__ array.
std::vector<std::string> in_place_of(const std::vector<std::string>& missing) {
  static const std::map<std::string, std::vector<std::string>> kInItsPlace = {
      {"ld.global.nc", {"ld.global"}},
      {"ld.const", {"ld.global", "ld.global.nc", "ld.shared"}},
      {"tex", {"ld.global", "ld.global.nc", "ld.generic"}},
      {"global_variable", {"pointer_access"}},
      {"bar.sync", {"st.shared", "ld.shared"}},
      {"ld.shared", {"ld.global", "ld.global.nc"}},
      {"st.shared", {"ld.global", "ld.global.nc"}},
      {"cp.async", {"ld.global", "ld.global.nc"}},
      {"cp.async.bulk", {"cp.async", "ld.global", "ld.global.nc"}},
      {"partial_wait", {"cp.async.wait_group", "cp.async.wait_all"}},
  };
  std::vector<std::string> out;
  for (const auto& cls : missing)
    if (auto it = kInItsPlace.find(cls); it != kInItsPlace.end())
      for (const auto& instead : it->second)
        if (std::find(out.begin(), out.end(), instead) == out.end()) out.push_back(instead);
  return out;
}

// For each line of kernel.cu an instruction class came from: "ld.local at
// kernel.cu:17: acc += window[k];", the student's own line quoted (made
// printable: it is the submission's text). At most three, the rest counted.
std::vector<std::string> where_in_source(const std::string& what, const std::vector<int>& lines,
                                         const std::string& file_name, const std::string& source) {
  std::vector<std::string> source_lines;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);) source_lines.push_back(line);
  std::vector<std::string> out;
  constexpr std::size_t kShown = 3, kWidth = 100;
  for (std::size_t i = 0; i < lines.size() && i < kShown; ++i) {
    const int n = lines[i];
    std::string code = n >= 1 && static_cast<std::size_t>(n) <= source_lines.size() ? trim(source_lines[n - 1]) : "";
    if (code.size() > kWidth) code = code.substr(0, kWidth) + "...";
    out.push_back(what + " at " + file_name + ":" + std::to_string(n) + (code.empty() ? "" : ": " + printable(code)));
  }
  if (lines.size() > kShown)
    out.push_back(what + " on " + std::to_string(lines.size() - kShown) + " more line" +
                  (lines.size() - kShown == 1 ? "" : "s") + " of " + file_name);
  return out;
}

}  // namespace

// The name kernel.cu's PTX gives the kernel a check names: that name, or the one kernel
// of that name inside a namespace (an anonymous namespace gives a kernel internal
// linkage, as careful C++ does: "(anonymous namespace)::transpose_kernel"). Where
// several namespaces have one, the name as the check gives it, which then matches none.
std::string LabGrader::kernel_named(const std::string& name) const {
  if (ptx_.kernels.count(name)) return name;
  std::vector<std::string> found;
  const std::string suffix = "::" + name;
  for (const auto& [k, _] : ptx_.kernels)
    if (k.size() > suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0) found.push_back(k);
  return found.size() == 1 ? found.front() : name;
}

// Where each instruction class came from, by -lineinfo's .loc directives: the
// kernel.cu lines in r.data["lines"], each quoted in r.details.
void LabGrader::name_source_lines(CheckResult& r, const std::string& kernel,
                                  const std::vector<std::string>& classes) const {
  const auto k = ptx_.kernels.find(kernel_named(kernel));
  if (k == ptx_.kernels.end()) return;
  json lines = json::object();
  const std::string file = student_file_name(), source = student_source();
  for (const auto& cls : classes) {
    const auto at = source_lines_of(ptx_, k->second, cls, file);
    if (at.empty()) continue;
    lines[cls] = at;
    for (auto& d : where_in_source(cls, at, file, source)) r.details.push_back(std::move(d));
  }
  if (lines.empty()) name_kernel_lines(r, k->second, lines);
  r.data["lines"] = lines;
}

// No instruction of a class to point at (an empty kernel, a missing barrier in a
// kernel with no shared memory, a spill): where the kernel is, its first and last
// lines in lines["kernel"], its first line quoted.
void LabGrader::name_kernel_lines(CheckResult& r, const PtxKernel& kernel, json& lines) const {
  const std::string file = student_file_name(), source = student_source();
  const auto at = kernel_lines_of(ptx_, kernel, file);
  if (at.empty()) return;
  // An empty body's one line is its closing brace: start at the line that names the
  // kernel, a few lines up at most (for display only: the PTX says where the code is).
  std::vector<std::string> text;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);) text.push_back(line);
  const std::string plain =
      kernel.name.substr(kernel.name.rfind("::") == std::string::npos ? 0 : kernel.name.rfind("::") + 2);
  int first = at.front();
  for (int n = at.front(); n >= 1 && n > at.front() - 8 && static_cast<std::size_t>(n) <= text.size(); --n)
    if (text[n - 1].find(plain + "(") != std::string::npos) {
      first = n;
      break;
    }
  const int last = std::max(first, at.back());
  lines["kernel"] = std::vector<int>{first, last};
  auto quoted = where_in_source(kernel.name, {first}, file, source);
  if (quoted.empty()) return;
  if (last > first) quoted.front() += "  (to line " + std::to_string(last) + ")";
  r.details.push_back(std::move(quoted.front()));
}

// The student's file as compiled, to quote the lines a check points at.
std::string LabGrader::student_source() const { return read_file(rep_.submission).value_or(""); }

std::string LabGrader::student_file_name() const { return fs::path(m_.student_file).filename().string(); }

CheckResult LabGrader::check_ptx(const Check& c) {
  const auto k = ptx_.kernels.find(kernel_named(c.kernel));
  if (k == ptx_.kernels.end()) {
    std::vector<std::string> names;
    for (const auto& [n, _] : ptx_.kernels) names.push_back(n);
    return failed(c, "no kernel named " + c.kernel +
                         " in kernel.cu (found: " + (names.empty() ? "none" : join(names, ", ")) + ")");
  }
  const auto present = [&](const std::string& cls) {
    if (cls == "extern_shared") return k->second.uses_extern_shared;
    // Named in the module is not enough: the kernel must read or write the
    // array through its own address (a __device__ counter it bumps, or a
    // pointer kept in a __device__ variable, is not a __device__ array).
    if (cls == "global_variable") return !k->second.accessed_global_variables.empty();
    if (cls == "const_variable") return !ptx_.const_variables.empty();
    return has_instruction(k->second, cls);
  };
  std::vector<std::string> missing, forbidden, shown;
  for (const auto& cls : c.must_contain) {
    (present(cls) ? shown : missing).push_back(cls);
  }
  std::vector<std::string> forbidden_present;
  for (const auto& cls : c.must_not_contain) {
    if (!present(cls)) continue;
    forbidden.push_back(cls + " (" + std::to_string(count_instruction(k->second, cls)) + "×)");
    forbidden_present.push_back(cls);
  }
  CheckResult r;
  r.kind = c.kind;
  r.data = {{"kernel", c.kernel}, {"missing", missing}, {"forbidden", forbidden}};
  if (missing.empty() && forbidden.empty()) {
    std::vector<std::string> parts = shown;
    for (const auto& cls : c.must_not_contain) parts.push_back("no " + cls);
    r.summary = c.kernel + " PTX: " + join(parts, ", ");
    return r;
  }
  r.status = Outcome::fail;
  std::vector<std::string> why;
  if (!missing.empty()) why.push_back("no " + join(missing, ", no "));
  if (!forbidden.empty()) why.push_back("still has " + join(forbidden, ", "));
  r.summary = c.kernel + " PTX: " + join(why, "; ");
  r.details = ptx_failure_details(c, ptx_, missing, forbidden_present);
  // Where the forbidden instructions are, and for a missing one the instructions in its place.
  std::vector<std::string> look_at = forbidden_present;
  for (const auto& instead : in_place_of(missing))
    if (std::find(look_at.begin(), look_at.end(), instead) == look_at.end()) look_at.push_back(instead);
  name_source_lines(r, c.kernel, look_at);
  return r;
}

CheckResult LabGrader::check_ptxas(const Check& c) {
  const auto k = resources_.find(kernel_named(c.kernel));
  if (k == resources_.end()) return failed(c, "ptxas reported no kernel named " + c.kernel);
  const auto& kr = k->second;
  CheckResult r;
  r.kind = c.kind;
  r.data = {{"kernel", c.kernel},
            {"registers", kr.registers},
            {"stack_frame", kr.stack_frame},
            {"spill_stores", kr.spill_stores},
            {"spill_loads", kr.spill_loads}};
  std::vector<std::string> bad;
  if (c.max_stack_frame && kr.stack_frame > *c.max_stack_frame)
    bad.push_back(std::to_string(kr.stack_frame) + " bytes stack frame (max " + std::to_string(*c.max_stack_frame) +
                  ")");
  if (c.max_spill_bytes && std::max(kr.spill_stores, kr.spill_loads) > *c.max_spill_bytes)
    bad.push_back(std::to_string(kr.spill_stores) + " bytes spill stores, " + std::to_string(kr.spill_loads) +
                  " bytes spill loads (max " + std::to_string(*c.max_spill_bytes) + ")");
  if (c.max_registers && kr.registers > *c.max_registers)
    bad.push_back(std::to_string(kr.registers) + " registers (max " + std::to_string(*c.max_registers) + ")");
  const std::string facts = std::to_string(kr.registers) + " registers, " + std::to_string(kr.stack_frame) +
                            " bytes stack frame, " + std::to_string(kr.spill_stores + kr.spill_loads) +
                            " bytes spilled";
  if (bad.empty()) {
    r.summary = c.kernel + ": " + facts;
  } else {
    r.status = Outcome::fail;
    r.summary = c.kernel + ": " + join(bad, "; ");
    if (kr.stack_frame > 0 || kr.spill_stores > 0) {
      r.symptom = Symptom::local_memory;
      // An array the kernel indexes at run time is in local memory in the PTX already, line by line;
      // a spill is ptxas' own choice, made after the PTX, and has no line there.
      const auto k = ptx_.kernels.find(kernel_named(c.kernel));
      std::vector<int> lines;
      if (k != ptx_.kernels.end()) {
        const std::string file = student_file_name();
        for (const char* cls : {"ld.local", "st.local"})
          for (int n : source_lines_of(ptx_, k->second, cls, file)) lines.push_back(n);
        std::sort(lines.begin(), lines.end());
        lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
        if (!lines.empty()) {
          std::vector<std::string> numbers;
          for (int n : lines) numbers.push_back(std::to_string(n));
          r.details.push_back("local memory (ld.local, st.local in the PTX) at " + file +
                              (lines.size() == 1 ? " line " : " lines ") + in_a_sentence(numbers));
        }
      }
      r.data["local_memory_lines"] = lines;
      if (lines.empty() && k != ptx_.kernels.end()) {
        json where = json::object();
        name_kernel_lines(r, k->second, where);
        r.data["lines"] = where;
      }
    }
  }
  return r;
}

}  // namespace grader
