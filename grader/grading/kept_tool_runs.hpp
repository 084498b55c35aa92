// The reports of ncu and compute-sanitizer runs, kept for a student's next
// grade of the very same program. A tool's report depends on the program's
// bytes, the tool, its options, the cases and the GPU, not on the random input
// values (the counters of one kernel came out identical in eight runs on five
// seeds, alone and beside other work: h100-ncu-isolation.log), so grading an unchanged
// kernel.cu again need not run the tools again. Only `grader grade` and
// `grader watch` keep and reuse them, and only outside a sandbox: a batch, a
// course check and `grader grade --fresh` run every tool every time.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "tool_run.hpp"

namespace grader {

struct KeptToolRun {
  std::string log;   // the tool's report file
  std::string when;  // when the tool ran, UTC ("2026-11-26 01:02")
};

// The key of a tool run: the program's bytes, the tool's own file (its size and
// time), its options with the run's folder taken out, the cases, and `gpu` (the
// GPU and its driver). Empty when the program cannot be read.
std::string tool_run_key(const ToolCall& call, const std::string& gpu);

// The kept run under `key` in `cache_dir`, if there is one that reads whole.
std::optional<KeptToolRun> find_kept_tool_run(const std::filesystem::path& cache_dir, const std::string& key);

// Keeps a report (written atomically). The caller keeps only a run that reached
// its end and measured the program (a sanitizer's summary, ncu's counters): a
// crash, a hang or counters the driver refused are the machine's or the run's,
// not the program's. A failure to write is not an error: the next grade runs the tool again.
void keep_tool_run(const std::filesystem::path& cache_dir, const std::string& key, const std::string& log);

}  // namespace grader
