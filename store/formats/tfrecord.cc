#include "store/formats/tfrecord.h"

#include <fmt/format.h>

#include <cstring>

#include "store/formats/crc32c.h"

namespace podsched::formats {
namespace {

void PutLe(uint64_t v, int bytes, std::string& out) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t GetLe(std::string_view s) {
  uint64_t v = 0;
  for (size_t i = s.size(); i-- > 0;) v = (v << 8) | static_cast<unsigned char>(s[i]);
  return v;
}

}  // namespace

void AppendTfRecord(std::string_view payload, std::string& out) {
  size_t start = out.size();
  PutLe(payload.size(), 8, out);
  PutLe(MaskCrc(Crc32c(std::string_view(out).substr(start, 8))), 4, out);
  out.append(payload);
  PutLe(MaskCrc(Crc32c(payload)), 4, out);
}

Status TfRecordWriter::Write(std::string_view payload) {
  if (!state_.ok()) return state_;
  frame_.clear();
  AppendTfRecord(payload, frame_);
  state_ = sink_(frame_);
  if (state_.ok()) {
    ++records_;
    bytes_ += frame_.size();
  }
  return state_;
}

Result<std::optional<std::string_view>> TfRecordReader::Next() {
  std::string_view rest = data_.substr(offset_);
  if (rest.empty()) return std::optional<std::string_view>();
  auto loss = [&](std::string_view what) {
    return DataLoss(
        fmt::format("TFRecord {} at record {} (byte offset {})", what, index_, offset_));
  };
  if (rest.size() < 12) return loss(fmt::format("truncated header ({} of 12 bytes)", rest.size()));
  std::string_view len_bytes = rest.substr(0, 8);
  if (MaskCrc(Crc32c(len_bytes)) != GetLe(rest.substr(8, 4))) {
    return loss("length CRC mismatch (corrupt length)");
  }
  uint64_t len = GetLe(len_bytes);
  if (len > rest.size() - 12 || rest.size() - 12 - len < 4) {
    return loss(
        fmt::format("truncated payload ({} bytes announced, {} left)", len, rest.size() - 12));
  }
  std::string_view payload = rest.substr(12, len);
  if (MaskCrc(Crc32c(payload)) != GetLe(rest.substr(12 + len, 4))) {
    return loss("payload CRC mismatch (corrupt data)");
  }
  offset_ += kTfRecordOverhead + len;
  ++index_;
  return std::optional<std::string_view>(payload);
}

Result<std::vector<std::string>> ReadAllTfRecords(std::string_view data) {
  TfRecordReader reader(data);
  std::vector<std::string> out;
  while (true) {
    auto rec = reader.Next();
    if (!rec) return std::unexpected(rec.error());
    if (!rec->has_value()) return out;
    out.emplace_back(**rec);
  }
}

}  // namespace podsched::formats
