#include "published_links.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace fs = std::filesystem;

namespace {

TEST(PublishedLinks, RelativeLinksAreReadAsTheirFolderSeesThem) {
  const auto links = grader::relative_links(
      "see [the model](../../docs/security.md#modes), [a run](docs/measurements/logs/x.log), "
      "[a site](https://example.com/a), [here](#top), [abs](/etc/passwd) and [![img](pic.png)](y.md)",
      "labs/lab07-bank-conflicts/README.md");
  EXPECT_EQ(links, (std::vector<fs::path>{"docs/security.md", "labs/lab07-bank-conflicts/docs/measurements/logs/x.log",
                                          "labs/lab07-bank-conflicts/pic.png", "labs/lab07-bank-conflicts/y.md"}));
}

// A cited docs/ file comes along; a link to anything else that the copy lacks
// (a solution, a file that never existed) is reported, never copied.
TEST(PublishedLinks, CitedDocsComeAlongAndOtherDeadLinksAreReported) {
  const fs::path base = fs::temp_directory_path() / ("published_links_test-" + std::to_string(::getpid()));
  fs::remove_all(base);
  const fs::path course = base / "course", copy = base / "copy";
  fs::create_directories(course / "docs" / "measurements" / "logs");
  fs::create_directories(course / "solutions" / "lab07");
  std::ofstream(course / "docs" / "security.md") << "model";
  std::ofstream(course / "docs" / "measurements" / "logs" / "run.log") << "log";
  std::ofstream(course / "solutions" / "lab07" / "kernel.cu") << "answer";
  fs::create_directories(copy / "labs" / "lab07");
  std::ofstream(copy / "README.md") << "[model](docs/security.md) [run](docs/measurements/logs/run.log)";
  std::ofstream(copy / "labs" / "lab07" / "README.md")
      << "[answer](../../solutions/lab07/kernel.cu) [gone](../../docs/nothing.md) [up](../../../x.md)";
  std::size_t copied = 0;
  const auto dead = grader::complete_links(course, copy, copied);
  EXPECT_EQ(copied, 2u);
  EXPECT_TRUE(fs::exists(copy / "docs" / "security.md"));
  EXPECT_TRUE(fs::exists(copy / "docs" / "measurements" / "logs" / "run.log"));
  EXPECT_FALSE(fs::exists(copy / "solutions"));
  EXPECT_EQ(dead, (std::vector<std::string>{"labs/lab07/README.md: solutions/lab07/kernel.cu",
                                            "labs/lab07/README.md: docs/nothing.md",
                                            "labs/lab07/README.md: ../x.md (outside the copy)"}));
  fs::remove_all(base);
}

}  // namespace
