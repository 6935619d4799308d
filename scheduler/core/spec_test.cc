#include "scheduler/core/spec.h"

#include <gtest/gtest.h>

#include "scheduler/core/state_machine.h"
#include "scheduler/core/test_util.h"

namespace podsched::core {
namespace {

struct BadSpec {
  const char* what;
  void (*mutate)(JobSpec&);
  const char* message_part;
};

TEST(ValidateSpecTest, RejectsBadFieldsWithClearMessages) {
  const pod::Fleet pod = pod::Fleet::Of(pod::Pod::Full("p", pod::Generation::kV2));
  const BadSpec cases[] = {
      {"unknown type", [](JobSpec& s) { s.accelerator = "v2-12"; }, "valid: v2-8"},
      {"larger than pod", [](JobSpec& s) { s.accelerator = "v2-1024"; }, "valid:"},
      {"empty command", [](JobSpec& s) { s.command = ""; }, "command is empty"},
      {"empty user", [](JobSpec& s) { s.user = UserName(""); }, "user is empty"},
      {"long name", [](JobSpec& s) { s.name = std::string(500, 'x'); }, "name is longer"},
      {"negative restarts", [](JobSpec& s) { s.max_restarts = -1; }, "max_restarts is -1"},
      {"absurd priority", [](JobSpec& s) { s.priority = 1 << 20; }, "priority is"},
      {"zero ranks", [](JobSpec& s) { s.ranks_per_host = 0; }, "ranks_per_host is 0"},
      {"negative grace",
       [](JobSpec& s) { s.grace_period = -std::chrono::seconds(1); }, "grace_period is"},
      {"zero expected",
       [](JobSpec& s) { s.expected_runtime = Duration::zero(); }, "expected_runtime"},
  };
  for (const BadSpec& c : cases) {
    JobSpec spec = testing::Spec("ada", "v2-8", false);
    c.mutate(spec);
    auto r = ValidateSpec(spec, pod);
    ASSERT_FALSE(r.has_value()) << c.what;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(r.error().message().find(c.message_part), std::string::npos)
        << c.what << ": " << r.error().message();
  }
  auto ok = ValidateSpec(testing::Spec("ada", "v2-128", true), pod);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->tensor_cores(), 128);
}

TEST(ValidateSpecTest, RefusesEnvNamesOfTheJobContract) {
  const pod::Fleet pod = pod::Fleet::Of(pod::Pod::Full("p", pod::Generation::kV2));
  for (const char* name : {"POD_JOB_ID", "POD_ARRAY_INDEX", "POD_ANYTHING", "RANK", "WORLD_SIZE",
                           "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "MASTER_ADDR",
                           "MASTER_PORT", "JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES",
                           "JAX_PROCESS_ID", "TF_CONFIG", "PODWORKER_TAG"}) {
    JobSpec spec = testing::Spec("ada", "v2-8", false);
    spec.env[name] = "x";
    auto r = ValidateSpec(spec, pod);
    ASSERT_FALSE(r.has_value()) << name;
    EXPECT_NE(r.error().message().find(std::string("env ") + name), std::string::npos)
        << r.error().message();
    EXPECT_NE(r.error().message().find("except POD_CHECKPOINT_URL"), std::string::npos)
        << r.error().message();
    // Stored before the rule existed: still loads.
    EXPECT_TRUE(ValidateSpec(spec, pod, SpecOrigin::kStored).has_value()) << name;
  }
  for (const char* bad : {"BAD-NAME", "1X", "", "A B"}) {
    JobSpec spec = testing::Spec("ada", "v2-8", false);
    spec.env[bad] = "x";
    auto r = ValidateSpec(spec, pod);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message().find("not a variable name"), std::string::npos);
  }
  JobSpec nul = testing::Spec("ada", "v2-8", false);
  nul.env["X"] = std::string("a\0b", 3);
  EXPECT_FALSE(ValidateSpec(nul, pod).has_value());
  // The audit's M9: a NUL in command or args was accepted, the agent dropped the Launch and the
  // job held its hosts PLACED for ever. Refused at submit; a stored one still loads.
  JobSpec nul_arg = testing::Spec("ada", "v2-8", false);
  nul_arg.args = {"ok", std::string("a\0b", 3)};
  auto r = ValidateSpec(nul_arg, pod);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message().find("args[1] contains a NUL byte") != std::string::npos, true)
      << r.error().message();
  EXPECT_TRUE(ValidateSpec(nul_arg, pod, SpecOrigin::kStored).has_value());
  JobSpec nul_command = testing::Spec("ada", "v2-8", false);
  nul_command.command = std::string("sh\0x", 4);
  EXPECT_FALSE(ValidateSpec(nul_command, pod).has_value());
  JobSpec allowed = testing::Spec("ada", "v2-8", false);
  allowed.env = {{"POD_CHECKPOINT_URL", "s3://b/c"}, {"POD_TOTAL_STEPS", "100"},
                 {"RANKING", "x"}, {"MY_POD_VAR", "y"}, {"JAX_PLATFORMS", "cpu"}};
  EXPECT_TRUE(ValidateSpec(allowed, pod).has_value());
}

TEST(StateMachineTest, LegalAndIllegalTransitions) {
  using S = JobState;
  EXPECT_TRUE(IsLegalTransition(std::nullopt, S::kQueued));
  EXPECT_FALSE(IsLegalTransition(std::nullopt, S::kRunning));
  EXPECT_TRUE(IsLegalTransition(S::kQueued, S::kPlaced));
  EXPECT_FALSE(IsLegalTransition(S::kQueued, S::kRunning));
  EXPECT_TRUE(IsLegalTransition(S::kPreempting, S::kCancelled));
  EXPECT_FALSE(IsLegalTransition(S::kRunning, S::kCancelled));  // through PREEMPTING
  for (S terminal : {S::kSucceeded, S::kFailed, S::kCancelled}) {
    for (int to = 0; to <= 7; ++to) {
      EXPECT_FALSE(IsLegalTransition(terminal, static_cast<S>(to)));
    }
  }
  Status s = CheckTransition(JobId(5), S::kSucceeded, S::kRunning);
  EXPECT_EQ(s.message(), "job 5: illegal transition SUCCEEDED -> RUNNING");
}

}  // namespace
}  // namespace podsched::core
