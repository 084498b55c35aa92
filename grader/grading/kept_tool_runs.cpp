#include "kept_tool_runs.hpp"

#include <nlohmann/json.hpp>

#include "atomic_file.hpp"
#include "content_hash.hpp"
#include "text.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace grader {
namespace {

constexpr const char* kSchema = "cuda-memory-labs/kept-tool-run/1";

fs::path kept_file(const fs::path& cache_dir, const std::string& key) {
  return cache_dir / "tool-runs" / (key + ".json");
}

}  // namespace

std::string tool_run_key(const ToolCall& call, const std::string& gpu) {
  std::error_code ec;
  if (!fs::is_regular_file(call.worker, ec)) return "";
  ContentHash h;
  h.add(kSchema).add(gpu).add_file(call.worker);
  // The tool's own file: another version of ncu may count differently.
  if (!call.tool.empty()) {
    const fs::path tool = call.tool.front();
    const auto size = fs::file_size(tool, ec);
    const auto time = fs::last_write_time(tool, ec).time_since_epoch().count();
    h.add(tool.string()).add(std::to_string(ec ? 0 : size)).add(std::to_string(ec ? 0 : time));
  }
  const std::string run_dir = call.work_dir.string();
  for (std::size_t i = 1; i < call.tool.size(); ++i) {
    std::string option = call.tool[i];
    if (!run_dir.empty() && option.rfind(run_dir, 0) == 0) option = "<run>" + option.substr(run_dir.size());
    h.add(option);
  }
  for (const auto& c : call.cases) h.add("case " + c);
  return h.hex();
}

std::optional<KeptToolRun> find_kept_tool_run(const fs::path& cache_dir, const std::string& key) {
  if (key.empty()) return std::nullopt;
  const auto text = read_file(kept_file(cache_dir, key));
  if (!text) return std::nullopt;
  try {
    const json j = json::parse(*text);
    if (j.value("schema", "") != kSchema || j.value("key", "") != key || !j.value("log", json()).is_string())
      return std::nullopt;
    return KeptToolRun{j["log"].get<std::string>(), j.value("when", std::string())};
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: run the tool again
  }
}

void keep_tool_run(const fs::path& cache_dir, const std::string& key, const std::string& log) {
  if (key.empty()) return;
  try {
    write_file_atomically(
        kept_file(cache_dir, key),
        json{{"schema", kSchema}, {"key", key}, {"when", utc_now("%Y-%m-%d %H:%M UTC")}, {"log", log}}.dump() + "\n");
  } catch (const std::exception&) {
    // Not kept: the next grade runs the tool again.
  }
}

}  // namespace grader
