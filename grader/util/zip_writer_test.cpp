#include "zip_writer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace grader {
namespace {

TEST(ZipWriter, Crc32OfTheStandardCheckString) {
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(crc32(""), 0u);
}

TEST(ZipWriter, RefusesNamesThatLeaveTheArchive) {
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../../x", "a/..", "..", "a\\b"})
    EXPECT_THROW(zip_archive({{bad, "x"}}), std::invalid_argument) << bad;
}

TEST(ZipWriter, TheSameFilesMakeTheSameArchive) {
  const std::vector<ZipEntry> e = {{"a.txt", "hello\n"}, {"dir/run", "#!/bin/sh\n", 0755}};
  EXPECT_EQ(zip_archive(e), zip_archive(e));
  const std::string z = zip_archive(e);
  EXPECT_EQ(z.substr(0, 4), std::string("PK\x03\x04", 4));
  EXPECT_NE(z.find(std::string("PK\x05\x06", 4)), std::string::npos);
}

// Python's zipfile reads it back whole: names, bytes and modes (where python3 is there).
TEST(ZipWriter, UnzipReadsBackNamesBytesAndModes) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3 to read the archive back";
  const std::string path = ::testing::TempDir() + "zip_writer_test.zip";
  {
    std::ofstream out(path, std::ios::binary);
    out << zip_archive({{"setup.sh", "echo set\n", 0755}, {"labs/lab07/kernel.cu", std::string(70000, 'k')}});
  }
  const std::string cmd =
      "/usr/bin/python3 -c \"import zipfile, sys; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; "
      "print(';'.join('%s %d %o' % (i.filename, i.file_size, i.external_attr >> 16) for i in z.infolist()))\" " +
      path;
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[512] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, p);
  EXPECT_EQ(::pclose(p), 0);
  EXPECT_EQ(std::string(buf, n), "setup.sh 9 100755;labs/lab07/kernel.cu 70000 100644\n");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace grader
