#include "common/json_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace podsched {
namespace {

using Json = nlohmann::json;

TEST(JsonReaderTest, ReadsEveryKindOfField) {
  const Json doc = Json::parse(R"({"name": "a", "n": 7, "big": 18446744073709551615, "f": 0.5,
    "on": true, "inner": {"x": -3}, "list": [{"k": 1}, {"k": 2}], "words": ["p", "q"],
    "env": {"A": "1"}})");
  JsonReader r(doc, "doc");
  EXPECT_EQ(r.String("name"), "a");
  EXPECT_EQ(r.Integer<int>("n"), 7);
  EXPECT_EQ(r.Integer<uint64_t>("big"), UINT64_MAX);
  EXPECT_EQ(r.Number("f"), 0.5);
  EXPECT_EQ(r.Float("f"), 0.5f);
  EXPECT_EQ(r.Number("n"), 7.0);  // an integer is a number
  EXPECT_TRUE(r.Bool("on"));
  EXPECT_EQ(r.Object("inner").Integer<int64_t>("x"), -3);
  std::vector<JsonReader> list = r.Objects("list");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].Integer<int>("k"), 2);
  EXPECT_EQ(r.Strings("words"), (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(r.StringMap("env").at("A"), "1");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

TEST(JsonReaderTest, OptionalFieldsTakeTheFallbackWhenMissingOrNull) {
  const Json doc = Json::parse(R"({"gone": null})");
  JsonReader r(doc, "doc");
  EXPECT_EQ(r.StringOr("gone", "x"), "x");
  EXPECT_EQ(r.IntegerOr<int>("absent", 5), 5);
  EXPECT_EQ(r.NumberOr("absent", 1.5), 1.5);
  EXPECT_TRUE(r.BoolOr("absent", true));
  EXPECT_FALSE(r.Has("gone"));
  EXPECT_TRUE(r.ok());
}

// Each row: a document, the read, and the words the error must contain. None may throw.
TEST(JsonReaderTest, EveryWrongShapeIsAnErrorNamingTheField) {
  struct Case {
    const char* doc;
    void (*read)(JsonReader&);
    const char* message;
  };
  const Case cases[] = {
      {R"({"format": 40})", [](JsonReader& r) { (void)r.String("format"); },
       "m: format must be a string, not an integer"},
      {R"({"format": 40})", [](JsonReader& r) { (void)r.StringOr("format", ""); },
       "format must be a string"},
      {R"({})", [](JsonReader& r) { (void)r.String("job"); }, "m: job is missing"},
      {R"({"n": 1e300})", [](JsonReader& r) { (void)r.Integer<int>("n"); },
       "n must be an integer in -2147483648..2147483647, not a fractional number"},
      {R"({"n": 2.5})", [](JsonReader& r) { (void)r.Integer<int64_t>("n"); }, "n must be an integer"},
      {R"({"n": -1})", [](JsonReader& r) { (void)r.Integer<uint64_t>("n"); }, "n is out of range"},
      {R"({"n": 4294967306})", [](JsonReader& r) { (void)r.Integer<int>("n"); }, "n is out of range"},
      {R"({"n": "7"})", [](JsonReader& r) { (void)r.IntegerOr<int>("n", 0); }, "not a string"},
      {R"({"x": 1e300})", [](JsonReader& r) { (void)r.Float("x"); }, "x is out of float's range"},
      {R"({"b": 1})", [](JsonReader& r) { (void)r.Bool("b"); }, "b must be true or false"},
      {R"({"model": []})", [](JsonReader& r) { (void)r.Object("model").Integer<int>("depth"); },
       "model must be an object, not an array"},
      {R"({"model": {"depth": "x"}})",
       [](JsonReader& r) { (void)r.Object("model").Integer<int>("depth"); },
       "model.depth must be an integer"},
      {R"({"shards": [{"size": 1}, 3]})", [](JsonReader& r) { (void)r.Objects("shards"); },
       "shards[1] must be an object, not an integer"},
      {R"({"shards": [{"size": 1}, {"size": true}]})",
       [](JsonReader& r) {
         for (JsonReader& s : r.Objects("shards")) (void)s.Integer<uint64_t>("size");
       },
       "shards[1].size must be an integer"},
      {R"({"tensors": ["a", 1]})", [](JsonReader& r) { (void)r.Strings("tensors"); },
       "tensors[1] must be a string"},
      {R"({"env": {"A": 1}})", [](JsonReader& r) { (void)r.StringMap("env"); },
       "env.A must be a string"},
  };
  for (const Case& c : cases) {
    const Json doc = Json::parse(c.doc);
    JsonReader r(doc, "m", StatusCode::kDataLoss);
    c.read(r);
    ASSERT_FALSE(r.ok()) << c.doc;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << c.doc;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos)
        << c.doc << " gave: " << r.status().message();
  }
}

// The text parser refuses 1e999, but a binary document (CBOR, as job specs are stored) can
// carry infinity and NaN.
TEST(JsonReaderTest, NumbersMustBeFinite) {
  for (double bad : {std::numeric_limits<double>::infinity(), std::nan("")}) {
    const Json doc = {{"x", bad}};
    JsonReader r(doc, "d");
    EXPECT_EQ(r.Number("x"), 0);
    EXPECT_EQ(r.status().message(), "d: x must be a finite number");
  }
}

TEST(JsonReaderTest, ADocumentThatIsNotAnObjectIsAnError) {
  for (const char* text : {"[]", "3", "\"s\"", "null"}) {
    const Json doc = Json::parse(text);
    JsonReader r(doc, "progress report");
    EXPECT_EQ(r.String("job"), "");
    EXPECT_EQ(r.Object("a").Integer<int>("b"), 0);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("progress report must be a JSON object"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(JsonReaderTest, TheFirstErrorIsKeptAndSharedWithNestedReaders) {
  const Json doc = Json::parse(R"({"a": {"x": "no"}, "b": 1})");
  JsonReader r(doc, "d");
  JsonReader a = r.Object("a");
  EXPECT_EQ(a.Integer<int>("x"), 0);  // a failed read gives the empty value
  (void)r.String("b");                // a second error does not replace the first
  EXPECT_FALSE(a.ok());
  EXPECT_NE(r.status().message().find("a.x must be"), std::string::npos) << r.status().message();
}

TEST(JsonReaderTest, CallerProblemsNameTheField) {
  const Json doc = Json::parse(R"({"o": {"kind": "lion"}})");
  JsonReader r(doc, "manifest");
  JsonReader o = r.Object("o");
  o.Fail("kind", "is not an optimizer");
  EXPECT_EQ(r.status().message(), "manifest: o.kind is not an optimizer");
}

TEST(JsonReaderTest, ParseJsonDocumentNamesTheDocument) {
  auto bad = ParseJsonDocument("{not json", "dataset.json", StatusCode::kDataLoss);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), StatusCode::kDataLoss);
  EXPECT_EQ(bad.error().message(), "dataset.json is not valid JSON");
  EXPECT_TRUE(ParseJsonDocument("{}", "x"));
}

}  // namespace
}  // namespace podsched
