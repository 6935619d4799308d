#include "common/json_reader.h"

#include <cmath>

namespace podsched {

struct JsonReader::Shared {
  std::string document;
  StatusCode code;
};

namespace {

// "a string", "an array", ... for "must be a number, not a string".
std::string_view KindOf(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a fractional number";
    case nlohmann::json::value_t::binary: return "binary data";
    case nlohmann::json::value_t::discarded: return "invalid";
  }
  return "a value of another type";
}

}  // namespace

Result<nlohmann::json> ParseJsonDocument(std::string_view bytes, std::string_view document,
                                         StatusCode code) {
  nlohmann::json j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error(code, std::string(document) + " is not valid JSON");
  return j;
}

JsonReader::JsonReader(const nlohmann::json& value, std::string document, StatusCode code)
    : JsonReader(value.is_object() ? &value : nullptr, "",
                 std::make_shared<Shared>(Shared{std::move(document), code}),
                 std::make_shared<std::optional<Status>>()) {
  if (object_ == nullptr) {
    *error_ = Status(code, shared_->document + " must be a JSON object, not " +
                               std::string(KindOf(value)));
  }
}

JsonReader::JsonReader(const nlohmann::json* object, std::string path,
                       std::shared_ptr<Shared> shared,
                       std::shared_ptr<std::optional<Status>> error)
    : object_(object), path_(std::move(path)), shared_(std::move(shared)),
      error_(std::move(error)) {}

std::string JsonReader::PathOf(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void JsonReader::Fail(std::string_view key, std::string_view problem) {
  if (error_->has_value()) return;  // the first error is the one worth reading
  *error_ = Status(shared_->code, shared_->document + ": " + PathOf(key) + " " + std::string(problem));
}

void JsonReader::WrongType(std::string_view key, const nlohmann::json& v,
                           std::string_view wanted) {
  Fail(key, "must be " + std::string(wanted) + ", not " + std::string(KindOf(v)));
}

void JsonReader::NotAnInteger(std::string_view key, const nlohmann::json& v,
                              std::string_view range) {
  if (v.is_number_integer() || v.is_number_unsigned()) {
    Fail(key, "is out of range (" + std::string(range) + ")");
  } else {
    WrongType(key, v, "an integer in " + std::string(range));
  }
}

bool JsonReader::Has(std::string_view key) const {
  if (object_ == nullptr) return false;
  auto it = object_->find(key);
  return it != object_->end() && !it->is_null();
}

const nlohmann::json* JsonReader::Field(std::string_view key, bool required) {
  if (object_ == nullptr) return nullptr;  // already reported
  auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) {
    if (required) Fail(key, "is missing");
    return nullptr;
  }
  return &*it;
}

std::string JsonReader::String(std::string_view key) {
  const nlohmann::json* v = Field(key, true);
  if (v == nullptr) return {};
  if (!v->is_string()) {
    WrongType(key, *v, "a string");
    return {};
  }
  return v->get_ref<const std::string&>();
}

std::string JsonReader::StringOr(std::string_view key, std::string fallback) {
  if (!Has(key)) return fallback;
  return String(key);
}

bool JsonReader::Bool(std::string_view key) {
  const nlohmann::json* v = Field(key, true);
  if (v == nullptr) return false;
  if (!v->is_boolean()) {
    WrongType(key, *v, "true or false");
    return false;
  }
  return v->get<bool>();
}

bool JsonReader::BoolOr(std::string_view key, bool fallback) {
  if (!Has(key)) return fallback;
  return Bool(key);
}

double JsonReader::Number(std::string_view key) {
  const nlohmann::json* v = Field(key, true);
  if (v == nullptr) return 0;
  if (!v->is_number()) {
    WrongType(key, *v, "a number");
    return 0;
  }
  const double d = v->get<double>();
  if (!std::isfinite(d)) {  // the parser takes 1e999 as infinity
    Fail(key, "must be a finite number");
    return 0;
  }
  return d;
}

double JsonReader::NumberOr(std::string_view key, double fallback) {
  if (!Has(key)) return fallback;
  return Number(key);
}

float JsonReader::Float(std::string_view key) {
  const double d = Number(key);
  if (std::fabs(d) > std::numeric_limits<float>::max()) {  // the conversion would be undefined
    Fail(key, "is out of float's range");
    return 0;
  }
  return static_cast<float>(d);
}

JsonReader JsonReader::Object(std::string_view key) {
  const nlohmann::json* v = Field(key, true);
  if (v != nullptr && !v->is_object()) {
    WrongType(key, *v, "an object");
    v = nullptr;
  }
  return JsonReader(v, PathOf(key), shared_, error_);
}

std::vector<JsonReader> JsonReader::Objects(std::string_view key) {
  std::vector<JsonReader> out;
  const nlohmann::json* v = Field(key, true);
  if (v == nullptr) return out;
  if (!v->is_array()) {
    WrongType(key, *v, "an array of objects");
    return out;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& element = (*v)[i];
    const std::string path = PathOf(key) + "[" + std::to_string(i) + "]";
    if (!element.is_object()) {
      WrongType(std::string(key) + "[" + std::to_string(i) + "]", element, "an object");
      return {};
    }
    out.push_back(JsonReader(&element, path, shared_, error_));
  }
  return out;
}

std::vector<std::string> JsonReader::Strings(std::string_view key) {
  std::vector<std::string> out;
  const nlohmann::json* v = Field(key, true);
  if (v == nullptr) return out;
  if (!v->is_array()) {
    WrongType(key, *v, "an array of strings");
    return out;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& element = (*v)[i];
    if (!element.is_string()) {
      WrongType(std::string(key) + "[" + std::to_string(i) + "]", element, "a string");
      return {};
    }
    out.push_back(element.get_ref<const std::string&>());
  }
  return out;
}

std::map<std::string, std::string> JsonReader::StringMap(std::string_view key) {
  std::map<std::string, std::string> out;
  const nlohmann::json* v = Field(key, true);
  if (v == nullptr) return out;
  if (!v->is_object()) {
    WrongType(key, *v, "an object of strings");
    return out;
  }
  for (const auto& [name, value] : v->items()) {
    if (!value.is_string()) {
      WrongType(std::string(key) + "." + name, value, "a string");
      return {};
    }
    out.emplace(name, value.get_ref<const std::string&>());
  }
  return out;
}

}  // namespace podsched
