#include "hmac.hpp"

#include <gtest/gtest.h>

namespace {

using grader::hmac_sha256_hex;

// RFC 4231's test cases 1, 2, 6 (a key longer than a block) and 7.
TEST(Hmac, Rfc4231Vectors) {
  EXPECT_EQ(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hmac_sha256_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hmac_sha256_hex(std::string(131, '\xaa'),
                            "This is a test using a larger than block-size key and a larger than block-size data. "
                            "The key needs to be hashed before being used by the HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(Hmac, ComparesWholeTexts) {
  EXPECT_TRUE(grader::same_text_constant_time("abc", "abc"));
  EXPECT_FALSE(grader::same_text_constant_time("abc", "abd"));
  EXPECT_FALSE(grader::same_text_constant_time("abc", "abcd"));
  EXPECT_TRUE(grader::same_text_constant_time("", ""));
}

}  // namespace
