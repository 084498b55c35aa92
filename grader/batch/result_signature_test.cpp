#include "result_signature.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include "toolchain.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class ResultSignature : public ::testing::Test {
 protected:
  void SetUp() override {
    out = fs::temp_directory_path() / ("result-signature-" + std::to_string(::getpid()));
    fs::remove_all(out);
  }
  void TearDown() override { fs::remove_all(out); }
  fs::path out;
};

TEST_F(ResultSignature, AKeyIsMadeOnceAndOnlyItsOwnerMayReadIt) {
  const std::string key = grader::make_result_key(out);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(grader::make_result_key(out), key);  // a resubmitted batch keeps its key
  EXPECT_EQ(grader::read_result_key(out), key);
  EXPECT_EQ(fs::status(out / "slurm" / "key").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(out / "slurm" / "key", fs::perms::others_read, fs::perm_options::add);
  EXPECT_THROW(grader::read_result_key(out), grader::EnvironmentError);
  EXPECT_THROW(grader::make_result_key(out), grader::EnvironmentError);
}

TEST_F(ResultSignature, APlantedLinkIsNoKey) {
  fs::create_directories(out / "slurm");
  fs::create_symlink("/etc/hostname", out / "slurm" / "key");
  EXPECT_THROW(grader::read_result_key(out), grader::EnvironmentError);
  EXPECT_THROW(grader::make_result_key(out), grader::EnvironmentError);
}

TEST_F(ResultSignature, NoKeySaysWhatToRun) {
  try {
    grader::read_result_key(out);
    FAIL() << "no key, yet read";
  } catch (const grader::EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("grader batch --slurm"), std::string::npos) << e.what();
  }
}

TEST_F(ResultSignature, ASignatureHoldsOnlyForTheTextItSigned) {
  const std::string key = grader::make_result_key(out);
  const json doc = {{"id", "ada"}, {"lab", "lab07"}, {"status", "graded"}, {"report", {{"score", 3.5}}}};
  const json s = grader::signed_result(doc, key);
  EXPECT_TRUE(grader::signature_holds(s, key));
  EXPECT_TRUE(grader::signature_holds(json::parse(s.dump(2)), key));  // read back from its file
  json edited = s;
  edited["report"]["score"] = 10;
  EXPECT_FALSE(grader::signature_holds(edited, key));
  EXPECT_FALSE(grader::signature_holds(doc, key));
  EXPECT_FALSE(grader::signature_holds(s, std::string(64, '0')));
  json wrong_type = s;
  wrong_type["signature"] = 1;
  EXPECT_FALSE(grader::signature_holds(wrong_type, key));
  EXPECT_FALSE(grader::signature_holds(json::array(), key));
}

}  // namespace
