// Checked reads of JSON documents that come from outside the process (manifests, data-set
// metadata, progress reports, stored specs, request and reply bodies).
//
// nlohmann's own accessors (`.at()`, `.get<T>()`, `.value()`, implicit conversions) throw on a
// missing field or a value of another type, and `get<int>()` casts numbers silently (1e300 is
// undefined behaviour, -1 read as unsigned wraps, 2.5 becomes 2). A decoder written against
// JsonReader cannot throw and cannot misread, whatever the bytes: every accessor checks the
// type, and the first problem is kept as a Status that names the document and the field's path
// ("manifest: optimizer.lr must be a number, not a string").
//
// The error is sticky and shared by a reader and every reader it hands out (Object, Objects),
// so a decoder reads all its fields straight through and checks once at the end:
//
//   JsonReader r(doc, "manifest", StatusCode::kDataLoss);
//   m.job = r.String("job");
//   JsonReader model = r.Object("model");
//   m.model.hidden = model.Integer<int>("hidden");
//   if (!r.ok()) return std::unexpected(r.status());
//
// After a failed read an accessor returns an empty value (0, "", false, {}), never garbage, so
// code that runs before the final check stays safe. Null counts as missing.
//
// Not thread-safe; a reader borrows the document, which must outlive it.
#pragma once

#include <concepts>
#include <cstdint>
#include <map>
#include <memory>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace podsched {

// The value of `v` when it is a JSON integer that fits in T; nullopt otherwise (floats, strings,
// out of range).
template <std::integral T>
std::optional<T> JsonInteger(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (!std::in_range<T>(u)) return std::nullopt;
    return static_cast<T>(u);
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (!std::in_range<T>(i)) return std::nullopt;
    return static_cast<T>(i);
  }
  return std::nullopt;
}

// Parses `bytes` without exceptions. Error (with `code`): "<document> is not valid JSON".
Result<nlohmann::json> ParseJsonDocument(std::string_view bytes, std::string_view document,
                                         StatusCode code = StatusCode::kInvalidArgument);

class JsonReader {
 public:
  // Reads the object `value`; records an error at once if it is not an object. `document` names
  // what is read in every message; `code` is the code of those errors (kDataLoss for stored
  // bytes, kInvalidArgument for requests).
  JsonReader(const nlohmann::json& value, std::string document,
             StatusCode code = StatusCode::kInvalidArgument);

  // Required fields: missing, null or of another type records an error naming the field.
  std::string String(std::string_view key);
  bool Bool(std::string_view key);
  double Number(std::string_view key);  // any finite JSON number
  float Float(std::string_view key);    // a finite number within float's range
  template <std::integral T>
  T Integer(std::string_view key);  // an integer that fits in T (no floats, no wrapping)
  JsonReader Object(std::string_view key);
  std::vector<JsonReader> Objects(std::string_view key);  // an array of objects
  std::vector<std::string> Strings(std::string_view key);  // an array of strings
  std::map<std::string, std::string> StringMap(std::string_view key);  // {"k": "v", ...}

  // Optional fields: missing or null gives `fallback`; present with another type is an error.
  std::string StringOr(std::string_view key, std::string fallback);
  bool BoolOr(std::string_view key, bool fallback);
  double NumberOr(std::string_view key, double fallback);
  template <std::integral T>
  T IntegerOr(std::string_view key, T fallback);

  // True when `key` is present and not null.
  bool Has(std::string_view key) const;

  // Records a problem the caller found in a field's value ("optimizer.kind: unknown ...").
  void Fail(std::string_view key, std::string_view problem);

  bool ok() const { return !error_->has_value(); }
  // The first error recorded, or OK.
  Status status() const { return error_->value_or(Status::Ok()); }

 private:
  struct Shared;
  JsonReader(const nlohmann::json* object, std::string path, std::shared_ptr<Shared> shared,
             std::shared_ptr<std::optional<Status>> error);

  // The field's value, or nullptr after recording "<path> is missing" (or nothing, when the
  // field is optional: `required` false).
  const nlohmann::json* Field(std::string_view key, bool required);
  void WrongType(std::string_view key, const nlohmann::json& v, std::string_view wanted);
  void NotAnInteger(std::string_view key, const nlohmann::json& v, std::string_view range);
  template <std::integral T>
  T ReadInteger(std::string_view key, bool required, T fallback);
  std::string PathOf(std::string_view key) const;

  const nlohmann::json* object_;  // nullptr when the value is not an object
  std::string path_;              // "optimizer" or "shards[2]"; empty at the top
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<std::optional<Status>> error_;
};

template <std::integral T>
T JsonReader::Integer(std::string_view key) {
  return ReadInteger<T>(key, /*required=*/true, T{});
}

template <std::integral T>
T JsonReader::IntegerOr(std::string_view key, T fallback) {
  return ReadInteger<T>(key, /*required=*/false, fallback);
}

template <std::integral T>
T JsonReader::ReadInteger(std::string_view key, bool required, T fallback) {
  const nlohmann::json* v = Field(key, required);
  if (v == nullptr) return required ? T{} : fallback;
  if (auto i = JsonInteger<T>(*v)) return *i;
  NotAnInteger(key, *v,
               std::to_string(std::numeric_limits<T>::min()) + ".." +
                   std::to_string(std::numeric_limits<T>::max()));
  return T{};
}

}  // namespace podsched
