#include "scheduler/daemon/json_util.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

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

bool HeaderNames(std::string_view header, std::string_view media_type) {
  const auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  while (!header.empty()) {
    const size_t comma = header.find(',');
    std::string_view entry = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    entry = trim(entry.substr(0, entry.find(';')));
    if (entry.size() == media_type.size() &&
        std::equal(entry.begin(), entry.end(), media_type.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return true;
    }
  }
  return false;
}

namespace {

// What ParseJson's checks and protobuf's JSON parser refuse, for a message parsed from its
// binary encoding: a field unknown to this server, a string longer than the limit.
Status CheckParsed(const google::protobuf::Message& m, const JsonLimits& limits) {
  const google::protobuf::Reflection* reflection = m.GetReflection();
  const std::string& type = m.GetDescriptor()->full_name();
  if (!reflection->GetUnknownFields(m).empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "invalid protobuf body: " + type + " has a field this podsched does not know " +
                      "(field " +
                      std::to_string(reflection->GetUnknownFields(m).field(0).number()) +
                      "; is the client newer than the server?)");
  }
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(m, &fields);
  const auto too_long = [&](const google::protobuf::FieldDescriptor* f) {
    return Status(StatusCode::kInvalidArgument, "a string in the body is longer than " +
                                                    std::to_string(limits.max_string_bytes) +
                                                    " bytes (" + f->full_name() + ")");
  };
  std::string scratch;
  for (const google::protobuf::FieldDescriptor* f : fields) {
    const int n = f->is_repeated() ? reflection->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_STRING) {
        const std::string& s = f->is_repeated()
                                   ? reflection->GetRepeatedStringReference(m, f, i, &scratch)
                                   : reflection->GetStringReference(m, f, &scratch);
        if (s.size() > limits.max_string_bytes) return too_long(f);
      } else if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
        const google::protobuf::Message& sub = f->is_repeated()
                                                   ? reflection->GetRepeatedMessage(m, f, i)
                                                   : reflection->GetMessage(m, f);
        if (Status s = CheckParsed(sub, limits); !s.ok()) return s;
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status ParseBody(std::string_view body, std::string_view content_type, const JsonLimits& limits,
                 google::protobuf::Message* message) {
  if (!HeaderNames(content_type, kProtobufMediaType)) return ParseJson(body, limits, message);
  // The API's messages nest a few levels at most: protobuf's own recursion limit (100) bounds a
  // hostile body before the schema does.
  if (body.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !message->ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    return Status(StatusCode::kInvalidArgument,
                  "invalid protobuf body: not a " + message->GetDescriptor()->full_name());
  }
  return CheckParsed(*message, limits);
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
