// Helpers for the core's tests: a scheduler on a small pod with an in-memory store.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "scheduler/core/scheduler.h"

namespace podsched::core::testing {

inline TimePoint At(double seconds) { return TimePoint{} + FromSeconds(seconds); }

inline JobSpec Spec(std::string user, std::string accelerator, bool preemptible,
                    int priority = 0) {
  JobSpec spec;
  spec.name = "test";
  spec.user = UserName(std::move(user));
  spec.accelerator = std::move(accelerator);
  spec.preemptible = preemptible;
  spec.priority = priority;
  spec.command = "/bin/true";
  spec.grace_period = std::chrono::seconds(30);
  return spec;
}

template <typename T>
std::vector<T> Only(const Actions& actions) {
  std::vector<T> out;
  for (const Action& a : actions) {
    if (const T* t = std::get_if<T>(&a)) out.push_back(*t);
  }
  return out;
}

class SchedulerFixture : public ::testing::Test {
 protected:
  // A v2 pod with a rows x cols host grid.
  void Start(int rows, int cols, SchedulerConfig config = DefaultConfig()) {
    auto pod = pod::Pod::Create("test", pod::Generation::kV2, rows, cols);
    ASSERT_TRUE(pod.has_value()) << pod.error().ToString();
    auto s = Scheduler::Create(std::move(*pod), std::move(config), &repo_, At(0));
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    sched_ = std::move(*s);
  }
  // A fleet of the given pods.
  void StartFleet(const std::vector<pod::FleetPodSpec>& pods,
                  SchedulerConfig config = DefaultConfig()) {
    auto fleet = pod::Fleet::Create(pods);
    ASSERT_TRUE(fleet.has_value()) << fleet.error().ToString();
    auto s = Scheduler::Create(std::move(*fleet), std::move(config), &repo_, At(0));
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    sched_ = std::move(*s);
  }
  static SchedulerConfig DefaultConfig() {
    SchedulerConfig config;
    config.min_runtime_before_preemption = Duration::zero();
    config.check_pass_memos = true;  // every skip a pass makes is checked
    return config;
  }
  JobId Submit(JobSpec spec, double t) {
    auto id = sched_->Submit(std::move(spec), At(t));
    EXPECT_TRUE(id.has_value()) << id.error().ToString();
    return id.value_or(JobId(-1));
  }
  const JobRecord& Job(JobId id) { return *sched_->Find(id); }
  JobEpoch Epoch(JobId id) { return {id, Job(id).epoch}; }
  Actions Tick(double t) { return sched_->Tick(At(t)); }
  void Exited(JobId id, ExitKind kind, double t, std::string reason = "") {
    auto r = sched_->ReportExited(Epoch(id), std::nullopt, kind, std::move(reason), At(t));
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
  }
  void Progress(JobId id, int64_t step, int64_t ckpt, double t) {
    auto r = sched_->ReportProgress(Epoch(id), step, ckpt, At(t));
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
  }

  InMemoryJobRepository repo_;
  std::unique_ptr<Scheduler> sched_;
};

}  // namespace podsched::core::testing

namespace podsched::core {
// The fixture of the SchedulerTest suite, shared by the files that hold its tests.
class SchedulerTest : public testing::SchedulerFixture {};
}  // namespace podsched::core
