// Which of a referee's two servers a request went to: the submission's program
// (worker) or the referee's own trusted server, the one process where a library
// (lab.json's "link") is linked and runs. A run failure says whose run failed
// by this name, and only a worker's failure can be the student's.
#pragma once

#include <nlohmann/json.hpp>

#include "named_enum.hpp"

namespace memlabs {

enum class ServerRole { worker, trusted };
inline constexpr ServerRole kEveryServerRole[] = {ServerRole::worker, ServerRole::trusted};
inline const char* name_of(ServerRole r) {
  switch (r) {
    case ServerRole::worker:
      return "worker";
    case ServerRole::trusted:
      return "trusted";
  }
  return "trusted";  // not reached: every ServerRole is named above
}
inline void to_json(nlohmann::json& j, ServerRole r) { j = name_of(r); }
inline void from_json(const nlohmann::json& j, ServerRole& r) { r = enum_from_json(j, kEveryServerRole, "server"); }

}  // namespace memlabs
