#include "worker/agent/job_processes.h"

#include <signal.h>
#include <spdlog/spdlog.h>


namespace podsched::agent {

bool JobProcesses::Trusts(pid_t pid, const JobEpoch& je, uint32_t uid) {
  auto it = running_.find(je.job);
  // A job not running here: its processes are killed as such. Otherwise the tag holds only
  // for the account the job runs as.
  if (it == running_.end() || it->second.epoch != je.epoch || !it->second.uid ||
      *it->second.uid == uid) {
    return true;
  }
  if (untrusted_warned_.size() >= 4096) untrusted_warned_.clear();  // a log line now and then
  if (untrusted_warned_.insert(pid).second) {
    spdlog::warn("pid {} (uid {}) carries the tag of job {} epoch {}, which runs as uid {}: "
                 "not taken as that job's process", pid, uid, je.job.value(), je.epoch,
                 *it->second.uid);
  }
  return false;
}

JobProcesses::JobProcesses(StateDir& state) : state_(state) {
  table_.set_tag_trust([this](pid_t pid, std::string_view tag, uint32_t uid) {
    JobEpoch je;
    int32_t host = 0;
    return !ParseTag(tag, je, host) || Trusts(pid, je, uid);
  });
}

JobProcesses::Found JobProcesses::Scan(std::map<JobId, Running> running) {
  running_ = std::move(running);
  table_.Scan();
  Found found;
  for (const auto& [id, r] : running_) found.pids[id];
  for (const auto& [pid, p] : table_.processes()) {
    JobEpoch je;
    int32_t host = 0;
    if (p.info.zombie || !ParseTag(p.tag, je, host)) continue;
    auto it = running_.find(je.job);
    if (it == running_.end() || it->second.epoch != je.epoch) {
      spdlog::warn("killing pid {} ({}) of job {} epoch {}, which does not run here", pid,
                   p.info.comm, je.job.value(), je.epoch);
      kill(pid, SIGKILL);
      continue;
    }
    found.pids[je.job].push_back(pid);
    if (table_.IsRank(pid)) ++found.ranks_up[{je.job, host}];
  }
  if (auto s = state_.Record(table_.Live()); !s.ok()) spdlog::warn("{}", s.ToString());
  return found;
}

std::vector<pid_t> JobProcesses::RanksAmong(const std::vector<pid_t>& pids) const {
  std::vector<pid_t> ranks;
  for (pid_t p : pids) {
    if (table_.IsRank(p)) ranks.push_back(p);
  }
  return ranks;
}

void JobProcesses::KillTagged(const JobEpoch& je, int32_t host) {
  for (const auto& [pid, p] : table_.processes()) {
    JobEpoch tagged;
    int32_t tagged_host = 0;
    if (ParseTag(p.tag, tagged, tagged_host) && tagged == je && tagged_host == host) {
      kill(pid, SIGKILL);
    }
  }
}

int JobProcesses::KillProcessesOfUid(uid_t uid) {
  int killed = 0;
  for (pid_t p : ProcessesOfUid(uid)) {
    if (kill(p, SIGKILL) == 0) ++killed;
  }
  return killed;
}

void JobProcesses::ClearRecord() { (void)state_.Record({}); }

}  // namespace podsched::agent
