#include "kernel_stubs.hpp"

#include <map>
#include <regex>
#include <sstream>

#include "child_process.hpp"
#include "toolchain.hpp"

namespace grader {

std::vector<std::string> kernels_defined_twice(const std::string& nm_output) {
  // "000...0250 t _Z40__device_stub__Z15resample_kernelPfiiyiiPfiiyii": the stub's own
  // mangled name is _Z<length><name><its parameters>, and <name> is __device_stub__
  // followed by the kernel's mangled name without its leading '_' ("Z15resample_kernel...")
  // or, for an extern "C" kernel, by its plain name.
  static const std::regex stub(R"(^_Z(\d+)__device_stub__)");
  std::map<std::string, int> stubs;
  std::istringstream in(nm_output);
  for (std::string line; std::getline(in, line);) {
    const auto space = line.find_last_of(' ');
    const std::string symbol = space == std::string::npos ? line : line.substr(space + 1);
    std::smatch m;
    // A part the compiler split off ("<stub>.cold") is the same function, not another stub.
    if (symbol.find('.') != std::string::npos || !std::regex_search(symbol, m, stub)) continue;
    const std::size_t length = std::stoul(m[1].str());
    const std::size_t start = m[1].length() + 2;  // past "_Z<digits>"
    if (symbol.size() < start + length) continue;
    const std::string rest = symbol.substr(start + 15, length - 15);  // past "__device_stub__"
    const bool mangled = rest.size() > 1 && rest[0] == 'Z' &&
                         (std::isdigit(static_cast<unsigned char>(rest[1])) || rest[1] == 'N' || rest[1] == 'L');
    ++stubs[mangled ? "_" + rest : rest];
  }
  std::vector<std::string> twice;
  for (const auto& [name, count] : stubs)
    if (count > 1) twice.push_back(name);
  return twice;
}

std::optional<std::vector<std::string>> kernels_defined_twice_in(const std::filesystem::path& program) {
  const auto nm = find_on_path("nm");
  if (!nm) return std::nullopt;
  ChildOptions o;
  o.argv = {nm->string(), "--defined-only", program.string()};
  o.capture_stdout_bytes = 64u << 20;
  o.timeout_s = 60;
  const ChildResult r = run_child(o);
  if (!r.exited || r.exit_code != 0 || r.stdout_truncated) return std::nullopt;
  return kernels_defined_twice(r.stdout_text);
}

}  // namespace grader
