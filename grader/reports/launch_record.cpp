#include "launch_record.hpp"

#include <algorithm>

#include "compiler_report.hpp"
#include "protocol/candidate_marker.hpp"
#include "text.hpp"

namespace grader {
namespace {

void add_once(std::vector<std::string>& to, const std::string& name) {
  if (std::find(to.begin(), to.end(), name) == to.end()) to.push_back(name);
}

}  // namespace

LaunchRecord read_launch_record(const std::vector<NcuLaunch>& launches, const std::vector<std::string>& own_entries,
                                const std::string& named, const std::vector<std::string>& defined_twice) {
  const auto listed = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  LaunchRecord r;
  for (const auto& l : launches) {
    if (l.kernel == memlabs::kCandidateMarkerKernel) {
      ++r.markers;
      continue;
    }
    if (r.markers == 0) continue;  // the harness's own launches: inputs and poison
    const std::string plain = demangle_kernel_name(l.kernel);
    if (!listed(own_entries, l.kernel) || listed(defined_twice, l.kernel)) {
      add_once(r.others, plain);
      if (listed(defined_twice, l.kernel)) add_once(r.shared, plain);
      continue;
    }
    add_once(r.own, plain);
    if (plain == named) r.named.push_back(l);
  }
  return r;
}

std::string launch_record_problem(const LaunchRecord& record, const std::string& case_name) {
  if (record.markers == 0)
    return "the harness's marker kernel never ran in case " + case_name +
           " (your program stopped it or ended before its kernels ran), so nothing shows which launches were yours";
  if (record.markers > 1)
    return "the harness's marker kernel ran " + std::to_string(record.markers) + " times in case " + case_name +
           "; it runs once, before your code: your program launched it again";
  if (!record.shared.empty())
    return "kernel.cu defines " + join(record.shared, ", ") +
           " with the very name of a kernel of the lab's own code, so its launches in case " + case_name +
           " cannot be told from the lab's: give your kernel a name of its own";
  if (!record.others.empty()) {
    std::vector<std::string> shown(record.others.begin(),
                                   record.others.begin() + std::min<std::size_t>(5, record.others.size()));
    return "in case " + case_name + ", kernels that are not in your kernel.cu ran after the inputs were made (" +
           join(shown, ", ") + (record.others.size() > shown.size() ? ", ..." : "") +
           "): a library's or the lab's own baseline. The outputs must come from your kernels";
  }
  return "";
}

}  // namespace grader
