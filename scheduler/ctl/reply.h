// What every podctl verb does with a reply: report an error, parse a message, print it as JSON
// or YAML.
#pragma once

#include <google/protobuf/message.h>
#include <google/protobuf/util/json_util.h>

#include <expected>
#include <string>

#include "scheduler/ctl/client.h"

namespace podsched::ctl {

// Prints "podctl: <message>" on stderr; returns the exit code.
int Report(const CallError& e);

// The reply's JSON as message M (unknown fields ignored: a newer server may add some).
template <typename M>
std::expected<M, CallError> Parse(const std::string& json) {
  M m;
  google::protobuf::util::JsonParseOptions o;
  o.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(json, &m, o).ok()) {
    return std::unexpected(CallError{kExitOther, "unexpected reply from the server"});
  }
  return m;
}

// The reply in protobuf's binary encoding as message M (Encoding::kProtobuf; unknown fields
// ignored, as above).
template <typename M>
std::expected<M, CallError> ParseBinary(const std::string& bytes) {
  M m;
  if (!m.ParseFromString(bytes)) {
    return std::unexpected(CallError{kExitOther, "unexpected reply from the server"});
  }
  return m;
}

// Pretty JSON with proto field names and every field.
std::string ToJsonText(const google::protobuf::Message& m);
// `output` "json" or "yaml".
void Print(const google::protobuf::Message& m, const std::string& output);

}  // namespace podsched::ctl
