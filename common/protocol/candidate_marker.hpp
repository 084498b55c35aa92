// The kernel a standalone run (`worker run`, worker_main.cpp) launches once per
// case between the harness's work and the candidate's: after the inputs are made
// and the outputs poisoned, before the lab's code is first called. Under ncu,
// which profiles every launch, whatever runs after it ran for the candidate, so
// the grader can tell the submission's kernels from a library's or the lab's
// baseline (grader/reports/launch_record.hpp). It is extern "C": a kernel.cu
// that defines a kernel of this name does not link, and one that launches it
// shows two markers.
#pragma once

namespace memlabs {
inline constexpr const char* kCandidateMarkerKernel = "memlabs_candidate_begins";
}
