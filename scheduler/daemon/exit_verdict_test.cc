#include "scheduler/daemon/exit_verdict.h"

#include <gtest/gtest.h>

namespace podsched::daemon {
namespace {

bus::Exited Report(bus::Exited::Reason reason, int exit_code = 0, std::string message = "") {
  bus::Exited m;
  m.set_reason(reason);
  m.set_exit_code(exit_code);
  m.set_message(std::move(message));
  return m;
}

TEST(ExitVerdictTest, EachReasonAsTheJobRecordsIt) {
  struct Case {
    bus::Exited m;
    bool past_grace;
    core::ExitKind kind;
    std::string reason;
  };
  const Case cases[] = {
      {Report(bus::Exited::COMPLETED), false, core::ExitKind::kSucceeded, ""},
      {Report(bus::Exited::PREEMPTED), false, core::ExitKind::kPreempted, "preempted (exit 75)"},
      {Report(bus::Exited::KILLED_AFTER_GRACE, 0, "SIGKILL after 30 s"), false,
       core::ExitKind::kKilled,
       "killed after the grace period (SIGTERM not honoured): SIGKILL after 30 s"},
      {Report(bus::Exited::KILLED), false, core::ExitKind::kKilled, "killed"},
      {Report(bus::Exited::KILLED), true, core::ExitKind::kKilled,
       "killed after the grace period (SIGTERM not honoured)"},
      {Report(bus::Exited::FAILED, 3), false, core::ExitKind::kFailed, "exit code 3"},
      {Report(bus::Exited::FAILED, -9, "oom"), false, core::ExitKind::kFailed,
       "killed by signal 9: oom"},
  };
  for (const Case& c : cases) {
    auto v = VerdictOf(c.m, c.past_grace);
    ASSERT_TRUE(v.has_value());
    EXPECT_FALSE(v->released);
    EXPECT_EQ(v->kind, c.kind) << c.reason;
    EXPECT_EQ(v->reason, c.reason);
  }
}

TEST(ExitVerdictTest, ReleasedIsNoVerdictAndUnknownReasonsAreInvalid) {
  auto v = VerdictOf(Report(bus::Exited::RELEASED, 0, "gone"), false);
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->released);
  EXPECT_EQ(v->reason, "");
  EXPECT_FALSE(VerdictOf(Report(bus::Exited::REASON_UNSPECIFIED), false).has_value());
}

TEST(ExitVerdictTest, TheAgentsMessageIsCutAtOneKibibyte) {
  auto v = VerdictOf(Report(bus::Exited::FAILED, 1, std::string(5000, 'x')), false);
  EXPECT_EQ(v->reason.size(), std::string("exit code 1: ").size() + 1024);
}

}  // namespace
}  // namespace podsched::daemon
