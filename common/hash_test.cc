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

TEST(HashTest, OneShotCallsGiveEachInputItsOwnDigest) {
  // Sha256 keeps the algorithm between calls, never a call's state.
  EXPECT_EQ(HexEncode(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string long_input(1000, 'x');
  Sha256Hasher pieces;
  pieces.Update(long_input.substr(0, 300));
  pieces.Update(long_input.substr(300));
  EXPECT_EQ(HexEncode(Sha256(long_input)), pieces.HexDigest());
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexEncode(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HashTest, HexRoundTripsAndRejectsGarbage) {
  const std::string raw("\x00\x7f\x80\xff", 4);
  EXPECT_EQ(HexEncode(raw), "007f80ff");
  EXPECT_EQ(HexDecode("007f80ff"), raw);
  EXPECT_EQ(HexDecode("007F80FF"), raw);
  EXPECT_EQ(HexDecode("abc"), "");   // odd length
  EXPECT_EQ(HexDecode("zz"), "");    // not hex
}

TEST(HashTest, HmacSha256MatchesRfc4231) {
  // RFC 4231 test case 2.
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(HashTest, RandomBytesAndConstantTimeEqual) {
  const std::string a = RandomBytes(16), b = RandomBytes(16);
  EXPECT_EQ(a.size(), 16u);
  EXPECT_NE(a, b);
  EXPECT_TRUE(ConstantTimeEqual(a, a));
  EXPECT_FALSE(ConstantTimeEqual(a, b));
  EXPECT_FALSE(ConstantTimeEqual("abc", "ab"));
}

}  // namespace
}  // namespace podsched
