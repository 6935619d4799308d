#include "worker/agent/launch_book.h"

#include <algorithm>

namespace podsched::agent {

LaunchBook::Outcome LaunchBook::OnLaunch(JobEpoch launch) {
  auto [it, inserted] = highest_.try_emplace(launch.job, launch.epoch);
  if (!inserted) {
    if (launch.epoch <= it->second) return {Decision::kStale, 0};
    it->second = launch.epoch;
  }
  if (auto r = running_.find(launch.job); r != running_.end()) {
    return {Decision::kReplaceOlder, r->second};
  }
  return {Decision::kStart, 0};
}

int64_t LaunchBook::HighestEpoch(JobId job) const {
  auto it = highest_.find(job);
  return it == highest_.end() ? 0 : it->second;
}

void LaunchBook::MarkRunning(JobEpoch je) { running_[je.job] = je.epoch; }

void LaunchBook::MarkEnded(JobEpoch je) {
  auto it = running_.find(je.job);
  if (it != running_.end() && it->second == je.epoch) running_.erase(it);
}

std::optional<int64_t> LaunchBook::RunningEpoch(JobId job) const {
  auto it = running_.find(job);
  if (it == running_.end()) return std::nullopt;
  return it->second;
}

bool LaunchBook::IsRunning(JobEpoch je) const { return RunningEpoch(je.job) == je.epoch; }

void LaunchBook::AddExit(ExitReport report) {
  std::erase_if(unacked_, [&](const ExitReport& r) { return r.job == report.job; });
  unacked_.push_back(std::move(report));
}

void LaunchBook::Ack(const std::vector<JobEpoch>& acked) {
  std::erase_if(unacked_, [&](const ExitReport& r) {
    return std::find(acked.begin(), acked.end(), r.job) != acked.end();
  });
}

namespace {

bus::Exited::Reason ToProto(ExitReason r) {
  switch (r) {
    case ExitReason::kCompleted: return bus::Exited::COMPLETED;
    case ExitReason::kFailed: return bus::Exited::FAILED;
    case ExitReason::kPreempted: return bus::Exited::PREEMPTED;
    case ExitReason::kKilledAfterGrace: return bus::Exited::KILLED_AFTER_GRACE;
    case ExitReason::kKilled: return bus::Exited::KILLED;
    case ExitReason::kReleased: return bus::Exited::RELEASED;
  }
  return bus::Exited::REASON_UNSPECIFIED;
}

}  // namespace

void ToProto(const ExitReport& r, bus::Exited& e) {
  e.mutable_job()->set_job_id(r.job.job.value());
  e.mutable_job()->set_epoch(r.job.epoch);
  e.set_reason(ToProto(r.reason));
  e.set_exit_code(r.exit_code);
  e.set_last_checkpoint_step(r.last_checkpoint_step);
  for (int32_t h : r.hosts) e.add_hosts(h);
  e.set_message(r.message);
}

}  // namespace podsched::agent
