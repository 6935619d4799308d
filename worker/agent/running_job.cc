#include "worker/agent/running_job.h"

#include <algorithm>

#include "worker/agent/exit_verdict.h"

namespace podsched::agent {
namespace {

int SessionsPerHost(const bus::Launch& l) {
  return RshSessionsPerHost(l.launcher() == bus::Launch::EXEC, l.ranks_per_host());
}

}  // namespace

RunningJob::RunningJob(const bus::Launch& l, const std::vector<int32_t>& agent_hosts,
                       MonotonicTime now, int64_t live_log_bytes_per_second)
    : launch(l),
      je{JobId(l.job().job_id()), l.job().epoch()},
      life(now, l.grace_seconds()),
      output(je, live_log_bytes_per_second) {
  auto mine = [&](int32_t h) {
    return std::binary_search(agent_hosts.begin(), agent_hosts.end(), h - l.first_host());
  };
  for (int32_t h : l.hosts()) {
    if (mine(h)) my_hosts.push_back(h);
  }
  std::sort(my_hosts.begin(), my_hosts.end());
  launcher = l.hosts_size() > 0 && mine(l.hosts(0));
}

bool RunningJob::Quiet(bool sessions_open, MonotonicTime now, Duration start_timeout) const {
  if (sessions_open || !pids.empty() || output.open()) return false;
  if (launcher) return mpirun_reaped;
  return life.MayRelease(
      now, EverySessionStarted(sessions_started, my_hosts, SessionsPerHost(launch)),
      start_timeout);
}

ExitReport RunningJob::Exit() const {
  ExitReport report;
  report.job = je;
  for (int32_t h : my_hosts) report.hosts.push_back(PodHost(h));
  report.last_checkpoint_step = last_checkpoint_step;
  if (!launcher) {
    report.reason = ExitReason::kReleased;
    report.message = sessions_started.empty() ? "no process was started here" : "processes gone";
  } else {
    ExitFacts facts = life.Facts(mpirun_status);
    facts.rank_reported_preempted = rank_reported_preempted;
    const Verdict v = ClassifyExit(facts);
    report.reason = v.reason;
    report.exit_code = v.exit_code;
    report.message = v.message;
  }
  if (!killed_for.empty()) report.message += " (" + killed_for + ")";
  return report;
}

bool RunningJob::FailedHere() const {
  const bool stopped = life.preempted() || life.killing();
  return !stopped && (failed_here || (ended && ended->reason == ExitReason::kFailed));
}

RshJob RunningJob::Rsh() const {
  return RshJob{launch.rsh_token(), my_hosts, life.killing() || ended.has_value(),
                SessionsPerHost(launch), sessions_started, launch.first_host()};
}

void RunningJob::FillRunning(bus::RunningJob& r) const {
  r.mutable_job()->set_job_id(je.job.value());
  r.mutable_job()->set_epoch(je.epoch);
  for (int32_t h : my_hosts) r.add_hosts(PodHost(h));
  for (pid_t p : pids) r.add_pids(p);
  for (int32_t h : ranks_up_hosts) r.add_ranks_up_hosts(PodHost(h));
}

bool RunningJob::OverProcessLimit(int64_t max_processes) {
  if (!killed_for.empty() || static_cast<int64_t>(pids.size()) <= max_processes) return false;
  killed_for = "podworker: the job had " + std::to_string(pids.size()) +
               " processes on this machine, more than --max-job-processes " +
               std::to_string(max_processes) + "; killed";
  return true;
}

std::string RunningJob::ScratchOf(int32_t host) const {
  auto it = scratch.find(host);
  return it == scratch.end() ? "" : it->second;
}

}  // namespace podsched::agent
