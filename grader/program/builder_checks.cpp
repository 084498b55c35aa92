// What a kernel.cu may bring into its build: the files nvcc -M says it
// includes (only the staged copies of the lab's and common/lab/'s headers, the
// toolkit's and the system's, and of those none of a library that would do a
// lab's work) and the host assembly it compiles to (no directive that reads a
// file or makes up directives). Builder runs these checks in builder_kernel.cpp.
#include <algorithm>
#include <optional>
#include <regex>
#include <sstream>

#include "builder.hpp"
#include "protocol/string_literals.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

// By the paths' text (they come canonical): "/a/bc" is not under "/a/b".
bool path_is_under(const fs::path& p, const fs::path& root) {
  const std::string s = p.string(), r = root.string();
  return s == r || (s.size() > r.size() && s.compare(0, r.size(), r) == 0 && (r.back() == '/' || s[r.size()] == '/'));
}

// The libraries whose headers a kernel.cu may not include: each would do a
// lab's work (a GEMM, a reduction, a transform) in the student's place. Told
// apart by a folder of their own anywhere in the path below an include root
// (cub/, thrust/, cutlass/, ...) or by the start of the file's name (cublas*,
// cufft*, npp*, ...), so CUDA 13's cccl/cub/ and an older toolkit's cub/ are
// the same library. More specific names come first (cublasLt before cublas).
struct LibraryHeaders {
  const char* library;
  const char* name;
  bool folder;  // a folder of its own, or the start of its headers' file names
};
const std::vector<LibraryHeaders>& library_headers() {
  static const std::vector<LibraryHeaders> table = {
      {"CUB", "cub", true},
      {"Thrust", "thrust", true},
      {"CUTLASS", "cutlass", true},
      {"CUTLASS", "cute", true},  // CuTe, CUTLASS's layout algebra
      {"cuBLASDx", "cublasdx", true},
      {"cuFFTDx", "cufftdx", true},
      {"cuSOLVERDx", "cusolverdx", true},
      {"cuRANDDx", "curanddx", true},
      {"MathDx", "commondx", true},
      {"cuDNN", "cudnn_frontend", true},
      {"cuBLASDx", "cublasdx", false},
      {"cuBLASLt", "cublasLt", false},
      {"cuBLAS", "cublas", false},  // cublas.h, cublas_v2.h, cublas_api.h, cublasXt.h
      {"cuSPARSE", "cusparse", false},
      {"cuFFTDx", "cufftdx", false},
      {"cuFFT", "cufft", false},  // cufft.h, cufftXt.h, cufftw.h
      {"cuRANDDx", "curanddx", false},
      {"cuRAND", "curand", false},  // curand.h and the device API, curand_kernel.h
      {"cuSOLVERDx", "cusolverdx", false},
      {"cuSOLVER", "cusolver", false},
      {"NPP", "npp", false},
      {"nvBLAS", "nvblas", false},
      {"cuDNN", "cudnn", false},
  };
  return table;
}

const char* const kLibraryNames =
    "CUB, Thrust, cuBLAS, cuBLASLt, cuSPARSE, cuFFT, cuRAND, cuSOLVER, NPP, nvBLAS, cuDNN, CUTLASS, MathDx";

// The path from the library's own folder on ("cub/device/device_reduce.cuh"),
// or the file's name ("cublas_v2.h"), and the library; nullopt for a header of
// no such library.
std::optional<std::pair<std::string, std::string>> library_header(const fs::path& relative) {
  std::vector<std::string> parts;
  for (const auto& p : relative) parts.push_back(p.string());
  if (parts.empty()) return std::nullopt;
  for (const auto& l : library_headers()) {
    if (l.folder) {
      for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        if (parts[i] != l.name) continue;
        fs::path from(parts[i]);
        for (std::size_t j = i + 1; j < parts.size(); ++j) from /= parts[j];
        return std::make_pair(from.string(), std::string(l.library));
      }
    } else if (parts.back().rfind(l.name, 0) == 0) {
      return std::make_pair(parts.back(), std::string(l.library));
    }
  }
  return std::nullopt;
}

// The headers a kernel.cu's own #include directives name, as written
// (<thrust/reduce.h> gives thrust/reduce.h): only to name them in a refusal.
std::vector<std::string> named_includes(const std::string& source) {
  static const std::regex directive(R"(^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"])");
  std::vector<std::string> out;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, directive)) out.push_back(m[1].str());
  }
  return out;
}

// "a", "a and b", "a, b and c": the first five.
std::string listed(const std::vector<std::string>& items) {
  return in_a_sentence({items.begin(), items.begin() + std::min<std::ptrdiff_t>(items.size(), 5)});
}

}  // namespace

std::string library_includes(const std::vector<std::string>& dependencies, const std::vector<fs::path>& header_roots,
                             const fs::path& staged, const std::string& source) {
  // The rule: no file the preprocessor read (nvcc -M's list) may be a
  // library's header, whoever named it: kernel.cu, a name a macro made, or
  // another header. nvcc -M says which files were read, not who included
  // them, and it need not: in CUDA 13.0 no header outside the libraries' own
  // folders includes one of them (none of cuda/, nv/, cooperative_groups,
  // nvtx3 or crt includes cub/ or thrust/; nvcc -M of every solution and alt_*
  // fixture reads no library header), so every library header read is one
  // kernel.cu names directly or through headers of no library, and the
  // refusal names those. Should a later toolkit's allowed header pull a
  // library in, it is refused too, on purpose: a submission may include any
  // toolkit header, so exempting what a toolkit header reads would let it
  // reach the library through that header (a cuda::std algorithm built on
  // CUB would do lab08's reduction). `grader check` builds every solution and
  // alt_* fixture, so the course would meet such a refusal before a student.
  std::vector<std::pair<std::string, std::string>> found;  // (header, library), in the order read
  for (const auto& d : dependencies) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(fs::path(d), ec);
    const fs::path p = ec ? fs::path(d) : canonical;
    if (path_is_under(p, staged)) continue;  // kernel.cu and the lab's and common/lab/'s headers
    for (const auto& root : header_roots) {
      if (!path_is_under(p, root)) continue;
      if (auto h = library_header(p.lexically_relative(root))) found.push_back(*h);
      break;
    }
  }
  if (found.empty()) return "";
  // Named as kernel.cu's own directives name the headers read; else (a name
  // made by a macro, or a header read through another) the first library
  // header read, which a file of no library included: none was read before it.
  std::vector<std::pair<std::string, std::string>> named;
  for (const auto& include : named_includes(source)) {
    const auto h = library_header(fs::path(include).lexically_normal());
    if (h && std::find(found.begin(), found.end(), *h) != found.end() &&
        std::find(named.begin(), named.end(), *h) == named.end())
      named.push_back(*h);
  }
  if (named.empty()) named.push_back(found.front());
  return library_refusal(named);
}

std::string library_refusal(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<std::string> named;
  for (const auto& [header, library] : headers) named.push_back(header + " (" + library + ")");
  return "kernel.cu includes " + listed(named) + ": a submission may not use a library that would do a lab's work (" +
         kLibraryNames +
         "). In this course your own kernels do the lab's work; the library is timed by the grader beside yours, "
         "in a program of its own. The CUDA runtime's headers, cooperative_groups, cuda/ (libcu++) and nvtx may be "
         "included.";
}

std::optional<std::string> library_of_header(const std::string& include) {
  const auto h = library_header(fs::path(include).lexically_normal());
  if (!h) return std::nullopt;
  return library_refusal({*h});
}

std::string library_calls(const std::vector<std::string>& undefined_symbols) {
  // The libraries a program links, by their functions' names: a header-only
  // library (CUB, Thrust, CUTLASS) leaves no undefined symbol of its own.
  std::vector<std::string> library, symbols;
  for (const auto& symbol : undefined_symbols) {
    for (const auto& l : library_headers()) {
      if (l.folder || symbol.rfind(l.name, 0) != 0) continue;
      if (std::find(library.begin(), library.end(), l.library) == library.end()) library.push_back(l.library);
      symbols.push_back(symbol);
      break;
    }
  }
  if (symbols.empty()) return "";
  return "kernel.cu calls " + listed(library) + " (" + listed(symbols) +
         "), which the submission's program does not link: it is built from driver.cu, kernel.cu and common/ alone. "
         "In this course your own kernels do the lab's work; the library is timed by the grader beside yours, in a "
         "program of its own.";
}

std::vector<std::string> parse_dependency_rule(const std::string& text) {
  std::vector<std::string> files;
  std::string word;
  bool target_done = false;
  const auto flush = [&] {
    if (word.empty()) return;
    if (!target_done && word.back() == ':') {
      target_done = true;  // "kernel.o:" names the target, not a dependency
    } else if (target_done && word != "\\" && word != ":") {
      files.push_back(word);
    } else if (!target_done && word == ":") {
      target_done = true;
    }
    word.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == ' ') {  // an escaped space is part of a name
      word += ' ';
      ++i;
    } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      flush();
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  return files;
}

std::string foreign_includes(const std::vector<std::string>& dependencies, const std::vector<fs::path>& allowed_roots) {
  std::vector<std::string> foreign;
  for (const auto& d : dependencies) {
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::path(d), ec);
    bool ok = false;
    for (const auto& root : allowed_roots) ok = ok || path_is_under(ec ? fs::path(d) : p, root);
    if (!ok) foreign.push_back(fs::path(d).filename().string());
  }
  if (foreign.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < foreign.size() && i < 5; ++i) list += (i ? ", " : "") + foreign[i];
  return "kernel.cu includes a file that is neither the lab's nor common/'s header nor the toolkit's (" + list +
         "): a submission is built from kernel.cu and the lab's public headers only";
}

std::string forbidden_assembly(const std::string& assembly) {
  // Directives that read a file into the program or make up other directives.
  static const std::regex directive(R"((^|[\s;:])\.(incbin|include|macro|irp|irpc|rept|altmacro|purgem)\b)");
  std::istringstream in(assembly);
  std::string line;
  while (std::getline(in, line)) {
    // Without the text of string literals (a message that mentions ".include" is not one), up to a comment.
    std::string code = memlabs::without_string_contents(line);
    code = code.substr(0, code.find('#'));
    std::smatch m;
    if (std::regex_search(code, m, directive))
      return "kernel.cu's host code holds assembly with ." + m[2].str() +
             ", which reads other files into the program or builds directives; a submission may not";
  }
  return "";
}

}  // namespace grader
