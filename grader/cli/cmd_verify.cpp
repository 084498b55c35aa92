// grader verify — in a class copy made by `grader publish`: is every file a
// student must not edit (everything but each lab's kernel.cu) unchanged?
// Exit 0 when intact, 1 when a protected file changed or is missing, 2 when
// the folder is not a published copy.
#include <iostream>

#include "app.hpp"
#include "course.hpp"
#include "json_text.hpp"
#include "publish.hpp"
#include "terminal.hpp"

namespace grader {
namespace {

int run_verify(const GlobalOptions& g) {
  const Course course = Course::discover(g.root);
  VerifyResult v;
  try {
    v = verify_published(course.root());
  } catch (const PublishError& e) {
    if (g.json)
      std::cout << json_text(nlohmann::json{
                       {"schema", "cuda-memory-labs/error/1"}, {"error", e.what()}, {"exit_code", e.exit_code}})
                << "\n";
    else
      std::cerr << Style::red("error: ") << e.what() << "\n";
    return e.exit_code;
  }
  const int code = v.ok() ? kExitPass : kExitStepFailed;
  if (g.json) {
    std::cout << json_text(nlohmann::json{{"schema", "cuda-memory-labs/verify/1"},
                                          {"course", course.root().string()},
                                          {"checked", v.checked},
                                          {"modified", v.modified},
                                          {"missing", v.missing},
                                          {"ok", v.ok()},
                                          {"exit_code", code}})
              << "\n";
    return code;
  }
  if (v.ok()) {
    std::cout << Style::pass_mark() << " " << v.checked << " protected files unchanged in " << course.root().string()
              << "\n";
    return code;
  }
  std::cout << Style::fail_mark() << " " << v.modified.size() + v.missing.size() << " of " << v.checked
            << " protected files differ from the published copy (only each lab's kernel.cu is yours to edit):\n";
  for (const auto& f : v.modified) std::cout << "    modified  " << f << "\n";
  for (const auto& f : v.missing) std::cout << "    missing   " << f << "\n";
  return code;
}

}  // namespace

Command verify_command() {
  return {"verify", "In a published class copy: list protected files that were modified or removed",
          [](CLI::App&, GlobalOptions& g) -> std::function<int()> { return [&g] { return run_verify(g); }; }};
}

}  // namespace grader
