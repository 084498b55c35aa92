// The referee's timing sessions of one grade, one per timed case, each on a
// thread of its own: started when a step first needs its case (the first one
// beside the correctness run), read when its checks come, and stopped when the
// grade ends before any step read them.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <string>

#include "referee_client.hpp"

namespace grader {

class TimingSessions {
 public:
  TimingSessions() = default;
  TimingSessions(const TimingSessions&) = delete;
  TimingSessions& operator=(const TimingSessions&) = delete;
  ~TimingSessions() { stop(); }

  bool started(const std::string& case_name) const { return sessions_.count(case_name) > 0; }
  // Starts `call`, the timing of `case_name`; a session disturbed by other work
  // runs again (timed_until_undisturbed). The call is cancelled by stop().
  void start(const std::string& case_name, RefereeCall call);
  // The session's outcome, waited for (with a spinner) when it is still running.
  const RunnerOutcome& result(const std::string& case_name);
  // Tells every session still running to stop (they end as "cancelled").
  void cancel() { cancel_ = true; }
  // cancel(), then waits until every session has ended.
  void stop();

 private:
  std::atomic<bool> cancel_{false};  // before the sessions, whose calls point at it
  std::map<std::string, std::shared_future<RunnerOutcome>> sessions_;
};

// A timing session that another process disturbed ("interference": the
// baseline ran slower beside the program than alone, so its times are not
// used) says nothing of the submission: a loaded host slowed lab03's
// managed-memory baseline by 1.35x beside an honest program on the H100. So
// a grade runs such a session again, up to kTimingSessions in all, and
// reports the first undisturbed one (or the last). A program that disturbs
// its own baseline disturbs every one of them.
constexpr int kTimingSessions = 3;
RunnerOutcome timed_until_undisturbed(const std::function<RunnerOutcome(int session)>& time);

}  // namespace grader
