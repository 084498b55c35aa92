#include "published_links.hpp"

#include <regex>

#include "text.hpp"

namespace fs = std::filesystem;

namespace grader {

std::vector<fs::path> relative_links(const std::string& markdown, const fs::path& file) {
  static const std::regex link(R"(\]\(([^()\s]+)\))");
  std::vector<fs::path> out;
  for (std::sregex_iterator it(markdown.begin(), markdown.end(), link), end; it != end; ++it) {
    std::string target = (*it)[1].str();
    if (target.empty() || target[0] == '#' || target[0] == '/') continue;
    if (const auto colon = target.find(':'); colon != std::string::npos && colon < target.find('/')) continue;
    target = target.substr(0, target.find('#'));
    out.push_back((file.parent_path() / target).lexically_normal());
  }
  return out;
}

std::vector<std::string> complete_links(const fs::path& course, const fs::path& copy, std::size_t& copied) {
  std::vector<std::string> dead;
  std::error_code ec;
  std::vector<fs::path> markdown;
  for (fs::recursive_directory_iterator it(copy, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".md") markdown.push_back(it->path());
  for (const auto& md : markdown) {
    const fs::path rel = fs::relative(md, copy);
    for (const auto& target : relative_links(read_file(md).value_or(""), rel)) {
      const std::string t = target.generic_string();
      if (t.rfind("../", 0) == 0 || t == "..") {
        dead.push_back(rel.generic_string() + ": " + t + " (outside the copy)");
        continue;
      }
      if (fs::exists(copy / target, ec)) continue;
      if (t.rfind("docs/", 0) == 0 && fs::is_regular_file(course / target, ec)) {
        fs::create_directories((copy / target).parent_path());
        fs::copy_file(course / target, copy / target);
        ++copied;
        continue;
      }
      dead.push_back(rel.generic_string() + ": " + t);
    }
  }
  return dead;
}

}  // namespace grader
