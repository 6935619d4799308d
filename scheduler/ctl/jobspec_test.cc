#include "scheduler/ctl/jobspec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scheduler/ctl/submit_flags.h"

namespace podsched::ctl {
namespace {

TEST(JobSpecYaml, ReadsEveryField) {
  auto spec = ParseJobSpecYaml(R"(
name: resnet50
accelerator: v2-32
preemptible: true
priority: 5
command: [python3, train.py, --epochs, "90"]
env: {DATA: /data}
ranks_per_host: 2
checkpoint_every_seconds: 600
grace_period_seconds: 20
max_runtime_seconds: 86400
max_restarts: 5
expected_runtime_seconds: 3600
checkpoint_url: file:///tmp/ckpt
launcher: exec
array: 0-99%10
dependency: afterok:12:13_2
zone: us-central1-b
pod: v2-pod
)");
  ASSERT_TRUE(spec.has_value()) << spec.error().message();
  EXPECT_EQ(spec->name(), "resnet50");
  EXPECT_TRUE(spec->preemptible());
  EXPECT_EQ(spec->priority(), 5);
  EXPECT_EQ(spec->command(), "python3");
  ASSERT_EQ(spec->args_size(), 3);
  EXPECT_EQ(spec->args(2), "90");
  EXPECT_EQ(spec->env().at("DATA"), "/data");
  EXPECT_EQ(spec->checkpoint_every_seconds(), 600);
  EXPECT_EQ(spec->max_restarts(), 5);
  EXPECT_EQ(spec->checkpoint_url(), "file:///tmp/ckpt");
  EXPECT_EQ(spec->launcher(), "exec");
  EXPECT_EQ(spec->array(), "0-99%10");
  EXPECT_EQ(spec->dependency(), "afterok:12:13_2");
  EXPECT_EQ(spec->zone(), "us-central1-b");
  EXPECT_EQ(spec->pod(), "v2-pod");
}

TEST(JobSpecYaml, CommandStringWithArgs) {
  auto spec = ParseJobSpecYaml("accelerator: v2-8\ncommand: /bin/train\nargs: [a, b]\n");
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->command(), "/bin/train");
  EXPECT_EQ(spec->args_size(), 2);
  EXPECT_FALSE(spec->has_max_restarts());
}

TEST(JobSpecYaml, ErrorsNameTheKey) {
  auto unknown = ParseJobSpecYaml("accelerator: v2-8\ncommand: x\naccelarator: v2-8\n");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message().find("accelarator"), std::string::npos);
  auto type = ParseJobSpecYaml("accelerator: v2-8\ncommand: x\npriority: high\n");
  ASSERT_FALSE(type.has_value());
  EXPECT_NE(type.error().message().find("priority"), std::string::npos);
  EXPECT_FALSE(ParseJobSpecYaml("command: x\n").has_value());
  EXPECT_FALSE(ParseJobSpecYaml("- a\n- b\n").has_value());
  EXPECT_FALSE(ParseJobSpecYaml("accelerator: [").has_value());
}

TEST(JobSpecYaml, EveryDeployExampleIsAValidSpec) {
  int seen = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(PODSCHED_SOURCE_DIR "/deploy/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto spec = ParseJobSpecYaml(text.str());
    ASSERT_TRUE(spec.has_value()) << entry.path() << ": " << spec.error().message();
    // The flags' checks (array, dependency, env names) pass on the file's values too.
    Status checked = ApplySubmitFlags(SubmitOptions{}, &*spec);
    EXPECT_TRUE(checked.ok()) << entry.path() << ": " << checked.message();
    ++seen;
  }
  EXPECT_GE(seen, 4);
}

// Found by tests/fuzz (jobspec_yaml): a key that is not a scalar threw yaml-cpp's
// TypedBadConversion out of the parser (std::terminate in podctl).
TEST(JobSpecYaml, NonScalarKeyIsAnError) {
  auto r = ParseJobSpecYaml("accelerator: v2-8\ncommand: x\n? [a, b]\n: c\n");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("key"), std::string::npos) << r.error().message();
  EXPECT_FALSE(ParseJobSpecYaml("{accelerator: v2-8}: x\n").has_value());
}

// Seen while fixing the finding above: 32-bit fields took the low 32 bits of a larger number
// (4294967306 became 10).
TEST(JobSpecYaml, Int32FieldsRejectLargerNumbers) {
  for (const char* key : {"priority", "ranks_per_host", "max_restarts", "slices"}) {
    auto r = ParseJobSpecYaml(std::string("accelerator: v2-8\ncommand: x\n") + key +
                              ": 4294967306\n");
    ASSERT_FALSE(r.has_value()) << key;
    EXPECT_NE(r.error().message().find(key), std::string::npos) << r.error().message();
  }
  auto ok = ParseJobSpecYaml("accelerator: v2-8\ncommand: x\npriority: -2147483648\n");
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_EQ(ok->priority(), -2147483648);
}

TEST(JobSpecYaml, SlicesAskForAMultisliceJob) {
  auto ok = ParseJobSpecYaml("accelerator: v2-8\ncommand: x\nslices: 2\n");
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_EQ(ok->slices(), 2);
  auto bad = ParseJobSpecYaml("accelerator: v2-8\ncommand: x\nslices: two\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("'slices'"), std::string::npos) << bad.error().message();
}

}  // namespace
}  // namespace podsched::ctl
