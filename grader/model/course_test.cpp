#include "course.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace grader {
namespace {

namespace fs = std::filesystem;

fs::path make_temp_dir() {
  static int counter = 0;
  fs::path dir =
      fs::temp_directory_path() / ("course_test." + std::to_string(getpid()) + "." + std::to_string(counter++));
  fs::create_directories(dir);
  return fs::canonical(dir);
}

void touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "x\n";
}

// A course with the real labs' shape plus folders that must be ignored.
class CourseTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = make_temp_dir();
    touch(root_ / "syllabus.md");
    for (const char* lab : {"lab07-bank-conflicts", "lab00-hardware", "lab01-registers", "lab05-readonly",
                            "lab06-shared-tiling", "lab08-reduction"})
      fs::create_directories(root_ / "labs" / lab);
    for (const char* other :
         {"notes", "lab9-short", "lab02_underscore", "Lab03-upper", "lab04-", "lab04-trailing-", "lab100-three-digits"})
      fs::create_directories(root_ / "labs" / other);
    touch(root_ / "labs" / "lab03-unified");  // a file, not a folder
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
};

TEST_F(CourseTest, OpenFindsLabFoldersSortedByNumber) {
  Course c = Course::open(root_);
  EXPECT_EQ(c.root(), root_);
  std::vector<std::string> folders;
  for (const auto& lab : c.labs()) folders.push_back(lab.folder);
  EXPECT_EQ(folders, (std::vector<std::string>{"lab00-hardware", "lab01-registers", "lab05-readonly",
                                               "lab06-shared-tiling", "lab07-bank-conflicts", "lab08-reduction"}));
  const LabInfo& lab = c.labs()[4];
  EXPECT_EQ(lab.id, "lab07");
  EXPECT_EQ(lab.number, 7);
  EXPECT_EQ(lab.topic, "bank-conflicts");
  EXPECT_EQ(lab.dir, root_ / "labs" / "lab07-bank-conflicts");
}

TEST_F(CourseTest, OpenAcceptsARelativeRoot) {
  fs::path old = fs::current_path();
  fs::current_path(root_ / "labs");
  Course c = Course::open("..");
  fs::current_path(old);
  EXPECT_EQ(c.root(), root_);
}

TEST_F(CourseTest, PathsInsideTheCourse) {
  Course c = Course::open(root_);
  const LabInfo& lab = c.resolve("lab05");
  EXPECT_EQ(c.solution_kernel(lab), root_ / "solutions" / "lab05-readonly" / "kernel.cu");
  EXPECT_EQ(c.state_dir(), root_ / ".grader");
}

// A course this user may not write to (a read-only mount, a class install,
// another user's checkout) keeps its state in a folder of the user's own, and
// says so; a checkout of its own keeps it in .grader/.
TEST_F(CourseTest, AStateFolderOfItsOwnWhereTheCourseIsNotTheUsers) {
  std::string note;
  EXPECT_EQ(state_dir_for(root_, ::geteuid(), note), root_ / ".grader");
  EXPECT_EQ(note, "");
  ::setenv("XDG_STATE_HOME", (root_ / "xdg").c_str(), 1);
  // Another user's course (as root, a mode would not stop the write: ownership does).
  const fs::path other = state_dir_for(root_, ::geteuid() + 1, note);
  EXPECT_EQ(other.parent_path(), root_ / "xdg" / "cuda-memory-labs");
  EXPECT_EQ(other.filename().string().rfind(root_.filename().string() + "-", 0), 0u) << other;
  EXPECT_NE(note.find("belongs to another user"), std::string::npos) << note;
  EXPECT_NE(note.find(other.string()), std::string::npos) << note;
  EXPECT_EQ(state_dir_for(root_, ::geteuid() + 1, note), other) << "the same folder every time";
  // A .grader that is not this user's, in a course that is.
  fs::create_directories(root_ / ".grader");
  if (::geteuid() == 0 && ::chown((root_ / ".grader").c_str(), 12345, 12345) == 0) {
    EXPECT_NE(state_dir_for(root_, 0, note), root_ / ".grader");
    EXPECT_NE(note.find(".grader belongs to another user"), std::string::npos) << note;
  }
  ::unsetenv("XDG_STATE_HOME");
}

std::string open_error(const fs::path& root) {
  try {
    Course::open(root);
  } catch (const CourseError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(CourseTest, OpenSaysWhatIsMissing) {
  EXPECT_EQ(open_error(root_ / "nope"), "\"" + (root_ / "nope").string() + "\" is not a course root: no such folder");
  EXPECT_NE(open_error(root_ / "syllabus.md").find("is not a folder"), std::string::npos);

  fs::path bare = root_ / "bare";
  fs::create_directories(bare);
  EXPECT_NE(open_error(bare).find("it has no labs/ folder and no syllabus.md"), std::string::npos) << open_error(bare);

  fs::create_directories(bare / "labs");
  EXPECT_NE(open_error(bare).find("it has no syllabus.md ("), std::string::npos) << open_error(bare);

  fs::path no_labs = root_ / "no_labs";
  touch(no_labs / "syllabus.md");
  EXPECT_NE(open_error(no_labs).find("it has no labs/ folder ("), std::string::npos) << open_error(no_labs);
}

TEST_F(CourseTest, TwoLabsWithOneNumberAreAnError) {
  fs::create_directories(root_ / "labs" / "lab07-transpose");
  std::string message = open_error(root_);
  EXPECT_NE(message.find("lab07-bank-conflicts"), std::string::npos) << message;
  EXPECT_NE(message.find("lab07-transpose"), std::string::npos) << message;
  EXPECT_NE(message.find("both use number 07"), std::string::npos) << message;
}

TEST_F(CourseTest, ResolveAcceptsEveryName) {
  Course c = Course::open(root_);
  for (const char* query : {"lab07-bank-conflicts", "lab07", "lab7", "7", "07", "bank-conflicts", "BANK-Conflicts",
                            "  Lab07  ", "bank", "bank-con", "\tLAB07-BANK-CONFLICTS\n"})
    EXPECT_EQ(c.resolve(query).folder, "lab07-bank-conflicts") << "query: \"" << query << "\"";
  EXPECT_EQ(c.resolve("0").folder, "lab00-hardware");
  EXPECT_EQ(c.resolve("shared").folder, "lab06-shared-tiling");
}

TEST_F(CourseTest, ResolveReturnsTheCoursesOwnEntry) {
  Course c = Course::open(root_);
  EXPECT_EQ(&c.resolve("readonly"), &c.labs()[2]);
}

TEST_F(CourseTest, TypoSuggestsTheClosestLab) {
  Course c = Course::open(root_);
  try {
    c.resolve("bnak-conflicts");
    FAIL() << "resolved a misspelt topic";
  } catch (const UnknownLab& e) {
    EXPECT_STREQ(e.what(), "no lab \"bnak-conflicts\"; did you mean lab07-bank-conflicts?");
    EXPECT_EQ(e.suggestions, (std::vector<std::string>{"lab07-bank-conflicts"}));
  }
  try {
    c.resolve("lab5-readonly");
    FAIL() << "resolved a misspelt folder";
  } catch (const UnknownLab& e) {
    EXPECT_EQ(e.suggestions, (std::vector<std::string>{"lab05-readonly"}));
  }
}

TEST_F(CourseTest, NothingCloseListsTheLabs) {
  Course c = Course::open(root_);
  try {
    c.resolve("transpose");
    FAIL() << "resolved an unrelated word";
  } catch (const UnknownLab& e) {
    EXPECT_STREQ(e.what(), "no lab \"transpose\"; the labs are lab00, lab01, lab05, lab06, lab07, lab08");
    EXPECT_TRUE(e.suggestions.empty());
  }
}

TEST_F(CourseTest, UnknownNumberListsTheLabs) {
  Course c = Course::open(root_);
  try {
    c.resolve("lab02");
    FAIL() << "resolved a number no lab has";
  } catch (const UnknownLab& e) {
    EXPECT_STREQ(e.what(), "no lab number 2; the labs are lab00, lab01, lab05, lab06, lab07, lab08");
  }
  EXPECT_THROW(c.resolve("999"), UnknownLab);
  EXPECT_THROW(c.resolve(""), UnknownLab);
  EXPECT_THROW(c.resolve("   "), UnknownLab);
}

TEST_F(CourseTest, AmbiguousPrefixListsTheMatches) {
  Course c = Course::open(root_);
  try {
    c.resolve("re");
    FAIL() << "resolved an ambiguous prefix";
  } catch (const AmbiguousLab& e) {
    EXPECT_STREQ(e.what(),
                 "lab \"re\" is ambiguous: it could be lab01-registers, lab05-readonly or "
                 "lab08-reduction; give more of the name");
    EXPECT_EQ(e.matches.size(), 3u);
  }
  EXPECT_EQ(c.resolve("red").folder, "lab08-reduction");
}

TEST(Course, SuggestsAtMostThree) {
  fs::path root = make_temp_dir();
  touch(root / "syllabus.md");
  for (const char* lab : {"lab01-aaa", "lab02-aab", "lab03-aac", "lab04-aad"})
    fs::create_directories(root / "labs" / lab);
  Course c = Course::open(root);
  try {
    c.resolve("aaz");
    FAIL() << "resolved a topic no lab has";
  } catch (const UnknownLab& e) {
    EXPECT_EQ(e.suggestions, (std::vector<std::string>{"lab01-aaa", "lab02-aab", "lab03-aac"}));
    EXPECT_STREQ(e.what(), "no lab \"aaz\"; did you mean lab01-aaa, lab02-aab or lab03-aac?");
  }
  fs::remove_all(root);
}

TEST(Course, EmptyLabsFolderIsACourseWithNoLabs) {
  fs::path root = make_temp_dir();
  touch(root / "syllabus.md");
  fs::create_directories(root / "labs");
  Course c = Course::open(root);
  EXPECT_TRUE(c.labs().empty());
  try {
    c.resolve("lab01");
    FAIL();
  } catch (const UnknownLab& e) {
    EXPECT_NE(std::string(e.what()).find("labs/ holds no labNN-topic folder"), std::string::npos) << e.what();
  }
  fs::remove_all(root);
}

// discover() reads the environment and the current folder: restore both.
class DiscoverTest : public CourseTest {
 protected:
  void SetUp() override {
    CourseTest::SetUp();
    cwd_ = fs::current_path();
    if (const char* env = std::getenv("CUDA_LABS_ROOT")) saved_env_ = env;
    unsetenv("CUDA_LABS_ROOT");
  }
  void TearDown() override {
    fs::current_path(cwd_);
    if (saved_env_)
      setenv("CUDA_LABS_ROOT", saved_env_->c_str(), 1);
    else
      unsetenv("CUDA_LABS_ROOT");
    CourseTest::TearDown();
  }

  fs::path cwd_;
  std::optional<std::string> saved_env_;
};

TEST_F(DiscoverTest, ExplicitRootWinsOverEnvironment) {
  setenv("CUDA_LABS_ROOT", "/nonexistent/course", 1);
  EXPECT_EQ(Course::discover(root_).root(), root_);
}

TEST_F(DiscoverTest, EnvironmentWinsOverCurrentFolder) {
  fs::path other = make_temp_dir();
  touch(other / "syllabus.md");
  fs::create_directories(other / "labs");
  setenv("CUDA_LABS_ROOT", other.c_str(), 1);
  fs::current_path(root_);
  EXPECT_EQ(Course::discover().root(), other);
  fs::remove_all(other);
}

TEST_F(DiscoverTest, BadEnvironmentIsNamedInTheError) {
  setenv("CUDA_LABS_ROOT", (root_ / "missing").c_str(), 1);
  try {
    Course::discover();
    FAIL() << "accepted a CUDA_LABS_ROOT that does not exist";
  } catch (const CourseError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("CUDA_LABS_ROOT: ", 0), 0u) << e.what();
  }
}

TEST_F(DiscoverTest, WalksUpFromTheCurrentFolder) {
  fs::path deep = root_ / "labs" / "lab07-bank-conflicts" / "sub";
  fs::create_directories(deep);
  fs::current_path(deep);
  EXPECT_EQ(Course::discover().root(), root_);
}

TEST_F(DiscoverTest, NoRootAnywhereIsAnError) {
  std::error_code ec;
  for (fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();; dir = dir.parent_path()) {
    if (Course::is_root(dir)) GTEST_SKIP() << "this test binary lives inside a course (" << dir << ")";
    if (dir == dir.parent_path()) break;
  }
  fs::path outside = make_temp_dir();
  fs::current_path(outside);
  try {
    Course::discover();
    FAIL() << "found a course root outside any course";
  } catch (const CourseError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("no course root found"), std::string::npos) << message;
    EXPECT_NE(message.find(outside.string()), std::string::npos) << message;
    EXPECT_NE(message.find("CUDA_LABS_ROOT"), std::string::npos) << message;
  }
  fs::current_path(cwd_);
  fs::remove_all(outside);
}

}  // namespace
}  // namespace grader
