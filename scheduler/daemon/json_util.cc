#include "scheduler/daemon/json_util.h"

#include <google/protobuf/util/json_util.h>

#include "api.pb.h"

namespace podsched::daemon {

Status CheckJsonBounds(std::string_view json, const JsonLimits& limits) {
  int depth = 0;
  bool in_string = false;
  size_t string_start = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
        if (i - string_start > limits.max_string_bytes) {
          return Status(StatusCode::kInvalidArgument, "a string in the body is longer than " +
                                                          std::to_string(limits.max_string_bytes) +
                                                          " bytes");
        }
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      string_start = i + 1;
    } else if (c == '{' || c == '[') {
      if (++depth > limits.max_depth) {
        return Status(StatusCode::kInvalidArgument,
                      "JSON nested deeper than " + std::to_string(limits.max_depth) + " levels");
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return Status::Ok();
}

Status ParseJson(std::string_view json, const JsonLimits& limits,
                 google::protobuf::Message* message) {
  if (Status s = CheckJsonBounds(json, limits); !s.ok()) return s;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message, options);
  if (!status.ok()) {
    return Status(StatusCode::kInvalidArgument,
                  "invalid JSON body: " + std::string(status.message()));
  }
  return Status::Ok();
}

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

std::string ErrorJson(std::string_view code, std::string_view message) {
  api::Error e;
  e.set_code(std::string(code));
  e.set_message(std::string(message));
  return ToJson(e);
}

bool HasControlCharacters(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

}  // namespace podsched::daemon
