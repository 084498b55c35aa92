// Compiler errors a student can read. nvcc's output mixes cudafe, g++, ptxas
// and the linker, names files by temporary absolute paths, and one typo can
// bury the real error under dozens of follow-ups; this puts the first error
// first, with paths as the student knows them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace grader {

struct CompilerMessage {
  std::string file;      // for a tool's own message, the tool: "ptxas", "nvlink", "ld"
  int line = 0;          // 0 when unknown
  std::string severity;  // "error" | "warning" | "note"
  std::string text;
  std::vector<std::string> context;  // the source and caret lines that follow
};

// Understands nvcc/cudafe ("file(12): error: ..."), g++ ("file:12:5: error: ..."),
// ptxas/nvlink/nvcc ("ptxas error   : ...") and the linker ("undefined reference
// to `launch_x(...)'"). Lines it does not recognise become context of the
// message before them.
std::vector<CompilerMessage> parse_compiler_output(const std::string& raw);

// Rewrites each path prefix to its replacement (longest prefix first), puts
// the first error first, then the remaining errors in order, then at most a
// few warnings; stops after max_errors errors with "... and N more errors".
// Output nothing here recognises is returned (rewritten, shortened) as it is.
std::string format_compiler_output(const std::string& raw,
                                   const std::vector<std::pair<std::string, std::string>>& path_rewrites,
                                   std::size_t max_errors = 5);

// `raw` without the messages about a file `shown` refuses, and without the lines
// that follow each (the source lines a compiler quotes from that file), nor the
// lines that name such a file as where one was included or in which function.
// Everything else is left as it is, for format_compiler_output.
std::string without_messages_about(const std::string& raw, const std::function<bool(const std::string& file)>& shown);

// The symbols a failed link names, in order, each once, as the linker writes
// them (a device link's mangled names demangled).
std::vector<std::string> undefined_symbols(const std::string& raw);

// For a link error such as "undefined reference to `launch_transpose(float*,
// float const*, int, int, CUstream_st*)'", a sentence naming what is missing:
// "launch_transpose(float*, float const*, int, int, cudaStream_t) is declared
// but never defined." The grader adds where it must be defined.
std::optional<std::string> missing_symbol(const std::string& raw);

}  // namespace grader
