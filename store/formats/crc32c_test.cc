#include "store/formats/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace podsched::formats {
namespace {

// Bit-at-a-time CRC-32C: slow, obviously right, independent of both fast implementations.
uint32_t ReferenceCrc32c(std::string_view data) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0);
  }
  return ~c;
}

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
  // RFC 3720 (iSCSI) appendix B.4.
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending += static_cast<char>(i);
    descending += static_cast<char>(31 - i);
  }
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(descending), 0x113FDB5Cu);
}

TEST(Crc32cTest, FastImplementationsMatchReferenceAtEveryLengthAndAlignment) {
  std::mt19937 rng(42);
  std::string buf(300, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t start = 0; start < 9; ++start) {
    for (size_t len = 0; start + len <= buf.size(); len += 1 + len / 4) {
      std::string_view s = std::string_view(buf).substr(start, len);
      uint32_t want = ReferenceCrc32c(s);
      ASSERT_EQ(Crc32c(s), want) << start << "+" << len;
      ASSERT_EQ(Crc32cExtendPortable(0, s), want) << start << "+" << len;
    }
  }
  SUCCEED() << "implementation: " << Crc32cImplementation();
}

TEST(Crc32cTest, ExtendConcatenates) {
  EXPECT_EQ(Crc32cExtend(Crc32c("1234"), "56789"), 0xE3069283u);
  EXPECT_EQ(Crc32cExtendPortable(Crc32cExtendPortable(0, "12345678"), "9"), 0xE3069283u);
}

TEST(Crc32cTest, MaskAsTensorFlow) {
  uint32_t crc = Crc32c("foo");
  EXPECT_NE(MaskCrc(crc), crc);
  EXPECT_NE(MaskCrc(MaskCrc(crc)), crc);
  EXPECT_EQ(UnmaskCrc(MaskCrc(crc)), crc);
  EXPECT_EQ(UnmaskCrc(UnmaskCrc(MaskCrc(MaskCrc(crc)))), crc);
  EXPECT_EQ(MaskCrc(0), 0xa282ead8u);
  EXPECT_EQ(MaskCrc(0x00008000u), 1u + 0xa282ead8u);  // rotate right by 15
}

}  // namespace
}  // namespace podsched::formats
