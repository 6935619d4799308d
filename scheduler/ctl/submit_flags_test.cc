#include "scheduler/ctl/submit_flags.h"

#include <gtest/gtest.h>

#include "scheduler/ctl/commands.h"

namespace podsched::ctl {
namespace {

TEST(ParseTimeLimitTest, SlurmFormsAndUnits) {
  const std::pair<const char*, int64_t> cases[] = {
      {"90", 90 * 60},    {"5:30", 330},         {"01:02:03", 3723}, {"2-0", 2 * 86400},
      {"1-02:30", 95400}, {"1-02:03:04", 93784}, {"90s", 90},        {"30m", 1800},
      {"2h", 7200},       {"1d", 86400},
  };
  for (const auto& [text, seconds] : cases) {
    auto r = ParseTimeLimit(text);
    ASSERT_TRUE(r.has_value()) << text << ": " << r.error().message();
    EXPECT_EQ(*r, seconds) << text;
  }
  for (const char* bad :
       {"", "0", "0s", "abc", "2x", "1:2:3:4", "-5", "1-", "h", "1.5h", "1-2:3:4:5", ":30"}) {
    auto r = ParseTimeLimit(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message().find("--time"), std::string::npos);
  }
}

TEST(ParseEnvFlagTest, NameValueAndReservedNames) {
  auto kv = ParseEnvFlag("DATA=/data/x=1");
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->first, "DATA");
  EXPECT_EQ(kv->second, "/data/x=1");
  auto empty = ParseEnvFlag("EMPTY=");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->second, "");
  for (const char* bad : {"NOVALUE", "=x", "1X=y", "A-B=c", "A B=c"}) {
    EXPECT_FALSE(ParseEnvFlag(bad).has_value()) << bad;
  }
  for (const char* reserved : {"RANK=1", "POD_JOB_ID=3", "TF_CONFIG={}", "PODWORKER_TAG=x"}) {
    auto r = ParseEnvFlag(reserved);
    ASSERT_FALSE(r.has_value()) << reserved;
    EXPECT_NE(r.error().message().find("job contract"), std::string::npos);
  }
  EXPECT_TRUE(ParseEnvFlag("POD_TOTAL_STEPS=100").has_value());
}

TEST(ApplySubmitFlagsTest, FlagsOverrideTheFileAndFillTheSpec) {
  api::JobSpec spec;
  spec.set_accelerator("v2-32");
  spec.set_command("/bin/old");
  (*spec.mutable_env())["KEEP"] = "1";
  SubmitOptions o;
  o.accelerator = "v2-8";
  o.env = {"A=1", "B=x=y"};
  o.ranks_per_host = 4;
  o.time = "1-00:00:00";
  o.launcher = "exec";
  o.array = "0-99%10";
  o.dependency = "afterok:12:13_2,afternotok:14";
  o.command = {"/usr/bin/train.py", "--lr", "0.1"};
  ASSERT_TRUE(ApplySubmitFlags(o, &spec).ok());
  EXPECT_EQ(spec.accelerator(), "v2-8");
  EXPECT_EQ(spec.env().at("KEEP"), "1");
  EXPECT_EQ(spec.env().at("A"), "1");
  EXPECT_EQ(spec.env().at("B"), "x=y");
  EXPECT_EQ(spec.ranks_per_host(), 4);
  EXPECT_EQ(spec.max_runtime_seconds(), 86400);
  EXPECT_EQ(spec.launcher(), "exec");
  EXPECT_EQ(spec.array(), "0-99%10");
  EXPECT_EQ(spec.dependency(), "afterok:12:13_2,afternotok:14");
  EXPECT_EQ(spec.command(), "/usr/bin/train.py");
  EXPECT_EQ(spec.args_size(), 2);
  EXPECT_EQ(spec.name(), "train.py");
}

TEST(ApplySubmitFlagsTest, BadArraysAndDependenciesFailBeforeAnyRequest) {
  struct Case {
    void (*set)(SubmitOptions&);
    const char* message_part;
  } cases[] = {
      {[](SubmitOptions& o) { o.array = "0-10000"; }, "more than 10000 tasks"},
      {[](SubmitOptions& o) { o.array = "0-9%0"; }, "throttle"},
      {[](SubmitOptions& o) { o.array = "7-2"; }, "backwards"},
      {[](SubmitOptions& o) { o.dependency = "after:12"; }, "not a dependency type"},
      {[](SubmitOptions& o) { o.dependency = "afterok"; }, "names no job"},
      {[](SubmitOptions& o) { o.env = {"MASTER_PORT=1"}; }, "MASTER_PORT"},
      {[](SubmitOptions& o) { o.time = "soon"; }, "--time"},
      {[](SubmitOptions& o) { o.command.clear(); }, "submit needs"},
  };
  for (const Case& c : cases) {
    SubmitOptions o;
    o.accelerator = "v2-8";
    o.command = {"x"};
    c.set(o);
    api::JobSpec spec;
    Status s = ApplySubmitFlags(o, &spec);
    ASSERT_FALSE(s.ok()) << c.message_part;
    EXPECT_NE(s.message().find(c.message_part), std::string::npos) << s.message();
  }
}

TEST(ApplySubmitFlagsTest, AFilesReservedEnvNameIsRefusedToo) {
  api::JobSpec spec;
  (*spec.mutable_env())["WORLD_SIZE"] = "4";
  SubmitOptions o;
  o.accelerator = "v2-8";
  o.command = {"x"};
  Status s = ApplySubmitFlags(o, &spec);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("env WORLD_SIZE"), std::string::npos) << s.message();
}

TEST(ValidJobArgTest, IdsAndArrayTasks) {
  EXPECT_TRUE(ValidJobArg("123"));
  EXPECT_TRUE(ValidJobArg("123_7"));
  for (const char* bad : {"", "x", "123_", "_7", "1_2_3", "12a", "-1"}) {
    EXPECT_FALSE(ValidJobArg(bad)) << bad;
  }
}

}  // namespace
}  // namespace podsched::ctl
