#include "gradescope_package.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "publish.hpp"

namespace fs = std::filesystem;

namespace grader {
namespace {

TEST(GradescopePackage, TheScriptsBuildOnceAndGradeTheLabWithThePenalty) {
  const std::string setup = gradescope_setup_script();
  EXPECT_EQ(setup.rfind("#!/usr/bin/env bash\n", 0), 0u);
  EXPECT_NE(setup.find("cd /autograder/source"), std::string::npos);
  EXPECT_NE(setup.find("bash scripts/setup"), std::string::npos);
  EXPECT_NE(setup.find("CUDA 13"), std::string::npos);  // what the image must hold, said where it is used
  const std::string run = gradescope_run_script("lab07-bank-conflicts", 0.5);
  EXPECT_NE(run.find("exec build/bin/grader gradescope --lab lab07-bank-conflicts --hint-penalty 0.5\n"),
            std::string::npos)
      << run;
  EXPECT_EQ(gradescope_run_script("lab00-hardware", std::nullopt).find("--hint-penalty"), std::string::npos);
}

// The lab's class copy with both scripts at the top, executable, and no solution in it
// (read back with Python's zipfile, where python3 is there).
TEST(GradescopePackage, TheZipHoldsTheClassCopyAndTheScriptsAtItsTop) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3 to read the zip back";
  const fs::path root = COURSE_ROOT;
  if (!fs::exists(root / "solutions")) GTEST_SKIP() << "a published copy cannot be packaged again";
  const fs::path out = fs::path(::testing::TempDir()) / ("package-" + std::to_string(::getpid()) + ".zip");
  GradescopePackageOptions o;
  o.out = out;
  o.lab = "lab07";
  o.hint_penalty = 0.5;
  o.from_working_tree = true;
  const auto r = package_gradescope(Course::discover(root), o);
  EXPECT_EQ(r.lab, "lab07-bank-conflicts");
  ASSERT_TRUE(fs::exists(out));
  const std::string cmd =
      "/usr/bin/python3 -c \"import zipfile, sys; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; "
      "n = {i.filename: i.external_attr >> 16 for i in z.infolist()}; "
      "print(oct(n['setup.sh']), oct(n['run_autograder']), 'labs/lab07-bank-conflicts/kernel.cu' in n, "
      "'scripts/setup' in n, any(k.startswith('solutions/') for k in n), any('lab00' in k for k in n), "
      "b'--lab lab07-bank-conflicts --hint-penalty 0.5' in z.read('run_autograder'))\" " +
      out.string();
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[256] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, p);
  EXPECT_EQ(::pclose(p), 0);
  EXPECT_EQ(std::string(buf, n), "0o100755 0o100755 True True False False True\n");
  // A second package over it is refused without --force.
  EXPECT_THROW(package_gradescope(Course::discover(root), o), PublishError);
  fs::remove(out);
}

}  // namespace
}  // namespace grader
