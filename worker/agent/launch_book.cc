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

}  // namespace podsched::agent
