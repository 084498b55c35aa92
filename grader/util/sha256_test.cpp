#include "sha256.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace {

using grader::Sha256;
using grader::sha256_hex;

// FIPS 180-4 / NIST CAVS example vectors.
TEST(Sha256, StandardVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(
      sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                 "mnopqrstnopqrstu"),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the 55/56/64-byte padding boundaries, fed in odd-sized pieces,
// must give the same digest as one update.
TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  for (std::size_t n : {0u, 1u, 55u, 56u, 57u, 63u, 64u, 65u, 119u, 120u, 1000u}) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<char>('a' + i % 26);
    Sha256 h;
    for (std::size_t i = 0; i < n; i += 7) h.update(s.substr(i, 7));
    EXPECT_EQ(h.hex(), sha256_hex(s)) << n;
  }
  EXPECT_EQ(sha256_hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, FileDigestMatchesAndMissingFileThrows) {
  const auto p = std::filesystem::temp_directory_path() / ("sha256_test-" + std::to_string(getpid()));
  std::ofstream(p, std::ios::binary) << std::string("abc");
  EXPECT_EQ(grader::sha256_file(p), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::filesystem::remove(p);
  EXPECT_THROW(grader::sha256_file(p), std::runtime_error);
}

TEST(Sha256, HexIsIdempotentAndUpdateAfterItThrows) {
  Sha256 h;
  h.update("abc");
  const std::string first = h.hex();
  EXPECT_EQ(h.hex(), first);
  EXPECT_THROW(h.update("x"), std::logic_error);
}

}  // namespace
