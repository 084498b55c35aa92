#include "run_category.hpp"

namespace grader {

const char* category_name(RunCategory c) {
  switch (c) {
    case RunCategory::ok:
      return "ok";
    case RunCategory::timeout:
      return "timeout";
    case RunCategory::crash:
      return "crash";
    case RunCategory::no_result:
      return "no_result";
    case RunCategory::cuda_error:
      return "cuda_error";
    case RunCategory::mismatch:
      return "mismatch";
    case RunCategory::timed_failure:
      return "timed_failure";
    case RunCategory::interference:
      return "interference";
    case RunCategory::usage:
      return "usage";
    case RunCategory::error:
      return "error";
    case RunCategory::protocol:
      return "protocol";
    case RunCategory::no_device:
      return "no_device";
    case RunCategory::referee:
      return "referee";
    case RunCategory::process_limit:
      return "process_limit";
    case RunCategory::cancelled:
      return "cancelled";
  }
  return "error";  // not reached: every RunCategory is named above
}

}  // namespace grader
