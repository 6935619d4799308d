#include "common/hash.h"

#include <gtest/gtest.h>

namespace podsched {
namespace {

TEST(HashTest, Sha256KnownVectors) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256("abc").size(), 32u);
}

TEST(HashTest, IncrementalEqualsOneShot) {
  Sha256Hasher h;
  h.Update("ab");
  h.Update("");
  h.Update("c");
  EXPECT_EQ(h.HexDigest(), Sha256Hex("abc"));
}

TEST(HashTest, HexRoundTripsAndRejectsGarbage) {
  const std::string raw("\x00\x7f\x80\xff", 4);
  EXPECT_EQ(HexEncode(raw), "007f80ff");
  EXPECT_EQ(HexDecode("007f80ff"), raw);
  EXPECT_EQ(HexDecode("007F80FF"), raw);
  EXPECT_EQ(HexDecode("abc"), "");   // odd length
  EXPECT_EQ(HexDecode("zz"), "");    // not hex
}

}  // namespace
}  // namespace podsched
