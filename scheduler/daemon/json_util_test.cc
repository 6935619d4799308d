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
