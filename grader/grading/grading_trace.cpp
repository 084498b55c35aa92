// The overlap check (check_overlap): the submission's program run once on the
// case with the tracing library injected (grader/probe/trace_injection.cpp),
// and its copies and kernels judged (reports/trace_report.hpp): how much of
// their span copies in, copies out and kernels ran side by side.
#include "activity.hpp"
#include "lab_grader.hpp"
#include "sealed_run.hpp"
#include "text.hpp"
#include "trace_report.hpp"

namespace fs = std::filesystem;

namespace grader {

namespace {

std::string milliseconds(double ns) { return fixed(ns / 1e6, 2) + " ms"; }

// The verdict on a trace's overlap: every kind of work present, and enough of the span side by side.
CheckResult overlap_result(const Check& c, const Overlap& o) {
  CheckResult r;
  r.kind = c.kind;
  r.data = {{"case", c.case_name},
            {"fraction", o.fraction()},
            {"min", c.min},
            {"span_ns", o.span_ns},
            {"overlapped_ns", o.overlapped_ns},
            {"copies_in", o.copies_in},
            {"copies_out", o.copies_out},
            {"kernels", o.kernels}};
  r.summary = "at " + c.case_name + ", copies and kernels ran side by side for " + fixed(100 * o.fraction(), 0) +
              " % of " + milliseconds(o.span_ns);
  r.details.push_back(std::to_string(o.copies_in) + " copies to the GPU (" + milliseconds(o.copy_in_ns) + "), " +
                      std::to_string(o.kernels) + " kernels (" + milliseconds(o.kernel_ns) + "), " +
                      std::to_string(o.copies_out) + " copies back (" + milliseconds(o.copy_out_ns) +
                      "), from the first to the last");
  if (o.copies_in == 0 || o.copies_out == 0 || o.kernels == 0) {
    r.status = Outcome::fail;
    r.symptom = Symptom::no_overlap;
    r.summary = "at " + c.case_name + ", your program made " + std::to_string(o.copies_in) + " copies to the GPU, " +
                std::to_string(o.kernels) + " kernels and " + std::to_string(o.copies_out) +
                " copies back: the step asks for all three, side by side";
  } else if (o.fraction() < c.min) {
    r.status = Outcome::fail;
    r.symptom = Symptom::no_overlap;
    r.summary += ", needs at least " + fixed(100 * c.min, 0) + " %";
  }
  return r;
}

}  // namespace

ToolCall LabGrader::trace_call(const Check& c, const fs::path& library) {
  ToolCall tc;
  tc.worker = rep_.student_build.worker;
  tc.cases = {c.case_name};
  tc.seed = tool_seed_;
  tc.work_dir = run_dir_ / ("trace-" + std::to_string(++tool_run_number_));
  tc.timeout_s = 3 * m_.timeout_s + 30;
  tc.who = "your program, traced";
  tc.env = {"CUDA_INJECTION64_PATH=" + library.string()};
  return tc;
}

CheckResult LabGrader::check_overlap(const Check& c) {
  if (auto why = gpu_unavailable()) return skipped(c, *why);
  const fs::path library = trace_library();
  if (library.empty())
    return skipped(c,
                   "not graded: the tracing library is missing next to the grader (bin/trace/libmemlabs-trace.so): "
                   "build it with `cmake --build build`");
  run_correctness();
  if (hung_beside(c)) return failed(c, student_run_.message, Symptom::timeout);
  Activity activity("trace: copies and kernels at " + c.case_name);
  // The library prints its lines on the program's stderr as the program exits.
  const ToolOutput run = tool_runs_
                             .start("trace " + c.case_name, trace_call(c, library), "stderr.txt",
                                    "trace: " + c.case_name, [](const std::string&) { return false; })
                             .get();
  if (const std::string why = tool_machinery_failure(run.outcome, run.log); !why.empty())
    return skipped(c, "not graded: your traced program " + why + ": the grader's own failure, not your program's");
  const Trace trace = parse_trace(run.log);
  if (!run.outcome.ok()) {
    // The library prints at exit, so a program that ends badly leaves no trace of its own
    // either way. Only a trace begun says the library worked and the program is to blame;
    // without one, the step's speed check at the same case says whether it runs there.
    if (recorded_anything(trace)) return failed(c, run.outcome.message, symptom_of(run.outcome.category));
    return skipped(c, "not graded: your program, traced at " + c.case_name + ", " + run.outcome.message +
                          ", before the tracing library had recorded anything: this says nothing of your program "
                          "until the library is seen working (the speed check at the same case times it untraced)");
  }
  const std::vector<TraceInterval> part = candidate_part(trace);
  if (!trace.ended || part.empty())
    return skipped(c, "not graded: the trace of your program at " + c.case_name +
                          " recorded nothing (the tracing library did not start in it): the grader's own failure");
  const Overlap overlap = measure_overlap(part);
  if (const double run_s = run.outcome.child.wall_s; spans_longer_than_the_run(overlap, run_s))
    return failed(c,
                  "at " + c.case_name + ", the trace claims copies and kernels over " +
                      fixed(overlap.span_ns / 1e9, 1) + " s in a run that lasted " + fixed(run_s, 1) +
                      " s: lines the tracing library did not write, which records only what ran while your program did",
                  Symptom::no_overlap);
  return overlap_result(c, overlap);
}

}  // namespace grader
