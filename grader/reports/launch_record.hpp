// What ran in a profiled case, launch by launch. ncu profiles every launch of
// the standalone run (`worker run`) and names each by its mangled name: first
// the harness's own (inputs, poison), then its marker (common/protocol/candidate_marker.hpp),
// then whatever the candidate launched. After the marker only kernels of
// kernel.cu may run: a named kernel launched for show while a library's kernel
// or the lab's baseline writes the outputs fails here, whatever its counters say.
#pragma once

#include <string>
#include <vector>

#include "ncu_report.hpp"

namespace grader {

struct LaunchRecord {
  int markers = 0;                  // the harness's marker: exactly one in a sound run
  std::vector<NcuLaunch> named;     // the named kernel's launches after the marker
  std::vector<std::string> own;     // plain names of kernel.cu's kernels that ran, in order, once each
  std::vector<std::string> others;  // plain names of the other kernels that ran after the marker, once each
  std::vector<std::string> shared;  // those of `others` whose name kernel.cu also gives a kernel of its own
};

// `own_entries`: the mangled names of kernel.cu's entries (its PTX); `named`:
// the plain name a check names (demangle_kernel_name); `defined_twice`: mangled
// names the program defines more than once (kernel_stubs.hpp), which say
// nothing of whose kernel ran.
LaunchRecord read_launch_record(const std::vector<NcuLaunch>& launches, const std::vector<std::string>& own_entries,
                                const std::string& named, const std::vector<std::string>& defined_twice = {});

// Why a record cannot stand as the candidate's evidence, in a student's words,
// or "" when it can: the marker missing or doubled, or kernels not in kernel.cu
// launched for the case.
std::string launch_record_problem(const LaunchRecord& record, const std::string& case_name);

}  // namespace grader
