#include "scheduler/daemon/json_util.h"

#include <gtest/gtest.h>

#include "api.pb.h"

namespace podsched::daemon {
namespace {

TEST(JsonBounds, Depth) {
  JsonLimits limits{4, 100};
  EXPECT_TRUE(CheckJsonBounds(R"({"a":[{"b":[]}]})", limits).ok());
  EXPECT_FALSE(CheckJsonBounds(R"({"a":[{"b":[[]]}]})", limits).ok());
  // Brackets inside strings do not count.
  EXPECT_TRUE(CheckJsonBounds(R"({"a":"[[[[[[[[\"[[[["})", limits).ok());
  std::string deep(10000, '[');
  EXPECT_FALSE(CheckJsonBounds(deep, limits).ok());
}

TEST(JsonBounds, StringLength) {
  JsonLimits limits{8, 5};
  EXPECT_TRUE(CheckJsonBounds(R"({"abc":"12345"})", limits).ok());
  EXPECT_FALSE(CheckJsonBounds(R"({"abc":"123456"})", limits).ok());
}

TEST(ParseJson, RejectsUnknownFieldsAndWrongTypes) {
  api::JobSpec spec;
  JsonLimits limits;
  EXPECT_TRUE(ParseJson(R"({"name":"x","accelerator":"v2-8","priority":3})", limits, &spec).ok());
  EXPECT_EQ(spec.priority(), 3);
  EXPECT_EQ(ParseJson(R"({"nmae":"x"})", limits, &spec).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseJson(R"({"priority":"high"})", limits, &spec).ok());
  EXPECT_FALSE(ParseJson(R"({"name":)", limits, &spec).ok());
  EXPECT_FALSE(ParseJson("[]", limits, &spec).ok());
}

TEST(HeaderNames, MatchesOneEntryOfTheHeaderWhateverItsParametersAndCase) {
  EXPECT_TRUE(HeaderNames("application/x-protobuf", kProtobufMediaType));
  EXPECT_TRUE(HeaderNames("Application/X-Protobuf; charset=binary", kProtobufMediaType));
  EXPECT_TRUE(HeaderNames("application/json;q=0.5, application/x-protobuf", kProtobufMediaType));
  EXPECT_FALSE(HeaderNames("", kProtobufMediaType));
  EXPECT_FALSE(HeaderNames("application/json", kProtobufMediaType));
  EXPECT_FALSE(HeaderNames("application/x-protobuf2", kProtobufMediaType));
  EXPECT_FALSE(HeaderNames("text/application/x-protobuf", kProtobufMediaType));
}

// A binary body is held to the JSON body's rules: it parses, no field this server does not
// know, no string past the limit (also in a map, and in a nested message).
TEST(ParseBody, ABinaryBodyIsHeldToTheJsonBodysRules) {
  JsonLimits limits{8, 16};
  api::JobSpec spec;
  spec.set_name("resnet");
  spec.set_accelerator("v2-8");
  spec.set_priority(3);
  (*spec.mutable_env())["A"] = "1";
  api::JobSpec got;
  ASSERT_TRUE(ParseBody(spec.SerializeAsString(), kProtobufMediaType, limits, &got).ok());
  EXPECT_EQ(got.name(), "resnet");
  EXPECT_EQ(got.priority(), 3);
  EXPECT_EQ(got.env().at("A"), "1");
  // Without the media type the same bytes are read as JSON, and refused as such.
  Status as_json = ParseBody(spec.SerializeAsString(), "application/json", limits, &got);
  EXPECT_EQ(as_json.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(as_json.message().find("invalid JSON body"), std::string::npos) << as_json.message();

  // Field 99 (varint 7): unknown here.
  const std::string unknown = spec.SerializeAsString() + std::string("\x98\x06\x07", 3);
  Status s = ParseBody(unknown, kProtobufMediaType, limits, &got);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("podsched.api.JobSpec has a field this podsched does not know "
                             "(field 99"),
            std::string::npos)
      << s.message();

  api::JobSpec long_env = spec;
  (*long_env.mutable_env())["B"] = std::string(17, 'x');
  s = ParseBody(long_env.SerializeAsString(), kProtobufMediaType, limits, &got);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("longer than 16 bytes"), std::string::npos) << s.message();
  api::JobSpec long_arg = spec;
  long_arg.add_args(std::string(17, 'y'));
  EXPECT_FALSE(ParseBody(long_arg.SerializeAsString(), kProtobufMediaType, limits, &got).ok());

  s = ParseBody("\xff\xff\xff", kProtobufMediaType, limits, &got);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "invalid protobuf body: not a podsched.api.JobSpec");
}

TEST(ToJson, UsesProtoNamesAndPrintsDefaults) {
  api::Job job;
  job.set_last_checkpoint_step(0);
  std::string json = ToJson(job);
  EXPECT_NE(json.find("\"last_checkpoint_step\""), std::string::npos);
  EXPECT_EQ(ErrorJson("not_found", "no job 7"), R"({"code":"not_found","message":"no job 7"})");
}

TEST(ControlCharacters, Detected) {
  EXPECT_FALSE(HasControlCharacters("resnet-50 run #3"));
  EXPECT_TRUE(HasControlCharacters("a\nb"));
  EXPECT_TRUE(HasControlCharacters(std::string("a\0b", 3)));
  EXPECT_TRUE(HasControlCharacters("\x1b[31m"));
}

}  // namespace
}  // namespace podsched::daemon
