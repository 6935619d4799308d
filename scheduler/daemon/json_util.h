// JSON at the API boundary: bounds checks on raw bytes, then protobuf's JSON mapping.
//
// Parsing rejects unknown fields and wrong types (protobuf's parser), and before that anything
// nested deeper than the limit or carrying a string longer than the limit, so a hostile body
// cannot make the parser recurse or allocate without bound. Output uses the proto field names
// (snake_case) and prints fields with default values, so clients always see every field.
//
// A body may also come in protobuf's binary encoding (kProtobufMediaType, ParseBody): the same
// messages, for a client that should not pay for protobuf's JSON mapping at every start (podctl:
// 2 of its 10 ms of CPU per submission). It is held to the same rules.
//
// Pure; thread-safe.
#pragma once

#include <google/protobuf/message.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace podsched::daemon {

struct JsonLimits {
  int max_depth = 32;
  size_t max_string_bytes = 64 << 10;
};

// Checks nesting depth and string lengths without building a tree. Errors: kInvalidArgument.
Status CheckJsonBounds(std::string_view json, const JsonLimits& limits);

// Bounds check, then parse into `message`. Errors (kInvalidArgument) quote protobuf's message.
Status ParseJson(std::string_view json, const JsonLimits& limits,
                 google::protobuf::Message* message);

// The media type of protobuf's binary encoding of the API's messages (Content-Type, Accept).
inline constexpr std::string_view kProtobufMediaType = "application/x-protobuf";

// True when a Content-Type or Accept header names `media_type` (one of its comma-separated
// entries, parameters and case aside).
bool HeaderNames(std::string_view header, std::string_view media_type);

// The body as `content_type` says: kProtobufMediaType, or JSON (anything else, as before). A
// binary body must parse, carry no field this server does not know (a newer client's setting
// would be lost without a word) and no string longer than limits.max_string_bytes.
// Errors: kInvalidArgument, naming the message type.
Status ParseBody(std::string_view body, std::string_view content_type, const JsonLimits& limits,
                 google::protobuf::Message* message);

// Compact JSON with proto field names and default-valued fields.
std::string ToJson(const google::protobuf::Message& message);

// {"code": "...", "message": "..."}.
std::string ErrorJson(std::string_view code, std::string_view message);

// True when `s` holds an ASCII control character (0x00-0x1f or 0x7f).
bool HasControlCharacters(std::string_view s);

}  // namespace podsched::daemon
