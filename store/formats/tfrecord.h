// TFRecord framing, byte-compatible with TensorFlow's tf.data.TFRecordDataset /
// tf.io.TFRecordWriter (uncompressed). Each record is
//
//   uint64 length (little-endian)
//   uint32 masked CRC-32C of the 8 length bytes
//   length bytes of payload
//   uint32 masked CRC-32C of the payload
//
// Pure: encodes to and decodes from memory; callers move the bytes (e.g. through an
// ObjectStore). Thread safety: value types; one reader or writer per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace podsched::formats {

constexpr size_t kTfRecordOverhead = 8 + 4 + 4;

// Appends the framed `payload` to `out`.
void AppendTfRecord(std::string_view payload, std::string& out);

// Writes framed records to a sink (for example an ObjectWriter's Append), one sink call per
// record. The first sink error is returned and sticks.
class TfRecordWriter {
 public:
  using Sink = std::function<Status(std::string_view bytes)>;
  explicit TfRecordWriter(Sink sink) : sink_(std::move(sink)) {}

  Status Write(std::string_view payload);
  uint64_t records() const { return records_; }
  uint64_t bytes() const { return bytes_; }

 private:
  Sink sink_;
  std::string frame_;
  Status state_;
  uint64_t records_ = 0;
  uint64_t bytes_ = 0;
};

// Reads records from a buffer that holds a whole TFRecord file.
class TfRecordReader {
 public:
  explicit TfRecordReader(std::string_view data) : data_(data) {}

  // The next payload (a view into the buffer), nullopt at a clean end of the data, or
  // kDataLoss naming the record index and byte offset for a CRC mismatch or a truncated record.
  Result<std::optional<std::string_view>> Next();

  uint64_t index() const { return index_; }    // records returned so far
  uint64_t offset() const { return offset_; }  // byte offset of the next record

 private:
  std::string_view data_;
  uint64_t index_ = 0;
  uint64_t offset_ = 0;
};

// Every payload of `data`, or the first error of TfRecordReader::Next.
Result<std::vector<std::string>> ReadAllTfRecords(std::string_view data);

}  // namespace podsched::formats
