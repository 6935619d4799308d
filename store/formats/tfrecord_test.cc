#include "store/formats/tfrecord.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace podsched::formats {
namespace {

std::string Hex(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += "0123456789abcdef"[c >> 4], out += "0123456789abcdef"[c & 15];
  return out;
}

TEST(TfRecordTest, FramingIsTensorFlowsByteForByte) {
  // Computed with an independent bit-at-a-time CRC-32C in Python.
  std::string out;
  AppendTfRecord("hello", out);
  EXPECT_EQ(Hex(out), "0500000000000000eab2043e68656c6c6fbb1f1c19");
  out.clear();
  AppendTfRecord("", out);
  EXPECT_EQ(Hex(out), "000000000000000029039807d8ea82a2");
}

TEST(TfRecordTest, WriterAndReaderRoundTrip) {
  std::string file;
  TfRecordWriter writer([&](std::string_view b) {
    file.append(b);
    return Status::Ok();
  });
  std::vector<std::string> payloads = {"", "a", std::string(70000, 'x'),
                                       std::string("last\0rec", 8)};
  for (const std::string& p : payloads) ASSERT_TRUE(writer.Write(p).ok());
  EXPECT_EQ(writer.records(), payloads.size());
  EXPECT_EQ(writer.bytes(), file.size());
  EXPECT_EQ(ReadAllTfRecords(file).value(), payloads);
  EXPECT_TRUE(ReadAllTfRecords("").value().empty());
}

TEST(TfRecordTest, WriterKeepsTheFirstSinkError) {
  int calls = 0;
  TfRecordWriter writer([&](std::string_view) {
    ++calls;
    return Status(StatusCode::kUnavailable, "disk gone");
  });
  EXPECT_EQ(writer.Write("a").code(), StatusCode::kUnavailable);
  EXPECT_EQ(writer.Write("b").code(), StatusCode::kUnavailable);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(writer.records(), 0u);
}

class TfRecordCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AppendTfRecord("first", file_);   // bytes [0, 21)
    AppendTfRecord("second", file_);  // bytes [21, 43)
  }
  Status ReadError(const std::string& data) {
    auto r = ReadAllTfRecords(data);
    return r ? Status::Ok() : r.error();
  }
  std::string file_;
};

TEST_F(TfRecordCorruptionTest, PayloadBitFlipIsDataLossNamingTheRecord) {
  std::string bad = file_;
  bad[21 + 12 + 2] ^= 0x01;  // a payload byte of record 1
  Status s = ReadError(bad);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("payload CRC mismatch"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("record 1 (byte offset 21)"), std::string::npos) << s.message();
}

TEST_F(TfRecordCorruptionTest, LengthAndCrcCorruption) {
  std::string bad_len = file_;
  bad_len[0] ^= 0x40;
  EXPECT_NE(ReadError(bad_len).message().find("length CRC mismatch"), std::string::npos);
  std::string bad_crc = file_;
  bad_crc.back() ^= 0x80;
  Status s = ReadError(bad_crc);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("record 1"), std::string::npos);
}

TEST_F(TfRecordCorruptionTest, TruncationAtEveryByteIsDetected) {
  for (size_t cut = 1; cut < file_.size(); ++cut) {
    if (cut == 21) continue;  // a clean record boundary
    Status s = ReadError(file_.substr(0, cut));
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << "cut at " << cut;
    EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
  }
  EXPECT_EQ(ReadAllTfRecords(file_.substr(0, 21)).value(), std::vector<std::string>{"first"});
}

TEST_F(TfRecordCorruptionTest, ReaderReportsPosition) {
  TfRecordReader reader(file_);
  EXPECT_EQ(reader.Next().value().value(), "first");
  EXPECT_EQ(reader.index(), 1u);
  EXPECT_EQ(reader.offset(), 21u);
  EXPECT_EQ(reader.Next().value().value(), "second");
  EXPECT_FALSE(reader.Next().value().has_value());
}

}  // namespace
}  // namespace podsched::formats

namespace podsched::formats {
namespace {

TEST(TfRecordTest, EveryFlippedByteIsDataLoss) {
  std::string file;
  std::vector<std::string> payloads = {"alpha", std::string(300, 'b'), "", "delta"};
  for (const std::string& p : payloads) AppendTfRecord(p, file);
  std::mt19937 rng(3);
  for (int i = 0; i < 2000; ++i) {
    std::string bad = file;
    size_t pos = rng() % bad.size();
    bad[pos] ^= static_cast<char>(1 + rng() % 255);
    auto got = ReadAllTfRecords(bad);
    ASSERT_FALSE(got.has_value()) << "a flipped byte at " << pos << " went unnoticed";
    EXPECT_EQ(got.error().code(), StatusCode::kDataLoss);
  }
}

}  // namespace
}  // namespace podsched::formats
