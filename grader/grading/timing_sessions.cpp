#include "timing_sessions.hpp"

#include <chrono>

#include "activity.hpp"
#include "phase_log.hpp"

namespace grader {

void TimingSessions::start(const std::string& case_name, RefereeCall call) {
  if (started(case_name)) return;
  call.cancel = &cancel_;
  sessions_.emplace(case_name, std::async(std::launch::async, [call, case_name] {
                                 const auto begin = std::chrono::steady_clock::now();
                                 RunnerOutcome out = timed_until_undisturbed([&](int session) {
                                   RefereeCall again = call;
                                   if (session > 1) again.work_dir /= "session-" + std::to_string(session);
                                   return call_referee(again);
                                 });
                                 // Work a grade started and threw away shows in its phases too.
                                 if (out.category == RunCategory::cancelled)
                                   note_phase("timing referee: " + case_name + " stopped, no step read it", begin,
                                              std::chrono::steady_clock::now(), 1);
                                 return out;
                               }).share());
}

const RunnerOutcome& TimingSessions::result(const std::string& case_name) {
  const std::shared_future<RunnerOutcome>& t = sessions_.at(case_name);
  if (t.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    Activity activity("timing " + case_name + " (baseline, yours, memcpy)");
    t.wait();
  }
  return t.get();  // an Interrupted rethrows here
}

void TimingSessions::stop() {
  cancel();
  for (auto& [name, f] : sessions_) f.wait();
}

RunnerOutcome timed_until_undisturbed(const std::function<RunnerOutcome(int session)>& time) {
  RunnerOutcome out = time(1);
  for (int session = 2; session <= kTimingSessions && out.category == RunCategory::interference; ++session)
    out = time(session);
  return out;
}

}  // namespace grader
