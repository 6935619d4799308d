#include "scheduler/daemon/launch_composer.h"

#include "common/host_list.h"

namespace podsched::daemon {

bus::Launch LaunchComposer::Compose(const core::LaunchPlan& plan,
                                    const std::map<HostId, std::string>& rsh_endpoints,
                                    const std::string& rsh_token) const {
  bus::Launch l;
  l.mutable_job()->set_job_id(plan.job.job.value());
  l.mutable_job()->set_epoch(plan.job.epoch);
  for (HostId h : plan.hosts) {
    l.add_hosts(h.value());
    if (auto it = rsh_endpoints.find(h); it != rsh_endpoints.end()) {
      (*l.mutable_rsh_endpoints())[h.value()] = it->second;
    }
  }
  l.set_ranks_per_host(plan.ranks_per_host);
  l.add_command(plan.command);
  for (const auto& a : plan.args) l.add_command(a);
  for (const auto& [k, v] : Env(plan)) (*l.mutable_env())[k] = v;
  l.set_rsh_token(rsh_token);
  l.set_grace_seconds(static_cast<int32_t>(ToSeconds(plan.grace_period)));
  l.set_log_url(options_.log_url);
  return l;
}

std::map<std::string, std::string> LaunchComposer::Env(const core::LaunchPlan& plan) const {
  std::map<std::string, std::string> env = plan.env;
  std::string ckpt = options_.default_checkpoint_url;
  if (auto it = plan.env.find("POD_CHECKPOINT_URL"); it != plan.env.end()) ckpt = it->second;
  const pod::Placement& p = plan.placement;
  env["POD_JOB_ID"] = std::to_string(plan.job.job.value());
  env["POD_EPOCH"] = std::to_string(plan.job.epoch);
  env["POD_ACCELERATOR"] = plan.accelerator.ToString();
  env["POD_SLICE"] = plan.pod + ":" + std::to_string(p.origin.col) + "," +
                     std::to_string(p.origin.row) + ":" + std::to_string(p.shape.cols) + "x" +
                     std::to_string(p.shape.rows);
  env["POD_HOSTS"] = FormatHostSequence(plan.hosts);
  env["POD_CHECKPOINT_URL"] = ckpt;
  env["POD_RESTART_COUNT"] = std::to_string(plan.restarts + plan.preemptions);
  if (plan.array) {
    env["POD_ARRAY_ID"] = std::to_string(plan.array->array_id.value());
    env["POD_ARRAY_INDEX"] = std::to_string(plan.array->index);
  }
  return env;
}

}  // namespace podsched::daemon
