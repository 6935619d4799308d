#include "scheduler/daemon/launch_composer.h"

#include <algorithm>
#include <limits>

#include "common/check.h"
#include "common/endpoint.h"
#include "common/host_list.h"
#include "scheduler/daemon/checkpoint_prefix.h"

namespace podsched::daemon {
namespace {

std::string AddressOf(HostId host, const std::map<HostId, std::string>& rsh_endpoints) {
  auto it = rsh_endpoints.find(host);
  if (it == rsh_endpoints.end()) return "0.0.0.0";
  auto ep = ParseIpv4Endpoint(it->second, "tcp");
  return ep ? ep->ip : "0.0.0.0";
}

// "pod0:COL,ROW:WxH": the pod, the origin host's column and row, the size in hosts.
std::string SliceText(const std::string& pod, const pod::Placement& p) {
  return pod + ":" + std::to_string(p.origin.col) + "," + std::to_string(p.origin.row) + ":" +
         std::to_string(p.shape.cols) + "x" + std::to_string(p.shape.rows);
}

}  // namespace

int LaunchComposer::Port(HostId host, int slot) const {
  return options_.port_first + host.value() * options_.ports_per_host + slot;
}

bus::Launch LaunchComposer::Compose(const core::LaunchPlan& plan,
                                    const std::map<HostId, std::string>& rsh_endpoints,
                                    const std::string& rsh_token) const {
  bus::Launch l;
  l.mutable_job()->set_job_id(plan.job.job.value());
  l.mutable_job()->set_epoch(plan.job.epoch);
  // Fleet ids: hosts of different pods that their pods number alike stay apart (a multislice
  // job's slices); each agent gets its pod's first_host (SendLaunch) to find its own.
  for (HostId h : plan.hosts) {
    l.add_hosts(h.value());
    if (auto it = rsh_endpoints.find(h); it != rsh_endpoints.end()) {
      (*l.mutable_rsh_endpoints())[h.value()] = it->second;
    }
  }
  l.set_ranks_per_host(plan.ranks_per_host);
  l.add_command(plan.command);
  for (const auto& a : plan.args) l.add_command(a);
  for (const auto& [k, v] : Env(plan, rsh_endpoints)) (*l.mutable_env())[k] = v;
  l.set_rsh_token(rsh_token);
  l.set_grace_seconds(static_cast<int32_t>(ToSeconds(plan.grace_period)));
  l.set_log_url(options_.log_url);
  l.set_launcher(plan.launcher == core::Launcher::kExec ? bus::Launch::EXEC : bus::Launch::MPI);
  l.set_unix_user(options_.unix_user_of ? options_.unix_user_of(plan.user) : plan.user.value());
  // The agents make the user's prefix theirs; below it the job creates what it needs itself.
  if (!options_.checkpoint_stores.default_url().empty() && !plan.user.value().empty()) {
    const std::string prefix = options_.checkpoint_stores.UserPrefixHolding(
        l.env().at("POD_CHECKPOINT_URL"), plan.user.value());
    if (!prefix.empty()) l.set_checkpoint_root(FileUrlDirectory(prefix));
  }
  return l;
}

std::map<std::string, std::string> LaunchComposer::Env(
    const core::LaunchPlan& plan, const std::map<HostId, std::string>& rsh_endpoints) const {
  std::map<std::string, std::string> env = plan.env;
  std::string ckpt = options_.checkpoint_stores.default_url();
  if (!plan.checkpoint_store.empty()) {
    ckpt = plan.checkpoint_store;
  } else if (auto it = plan.env.find("POD_CHECKPOINT_URL"); it != plan.env.end()) {
    ckpt = it->second;
  }
  const std::string job_id = std::to_string(plan.job.job.value());
  env["POD_JOB_ID"] = job_id;
  env["POD_EPOCH"] = std::to_string(plan.job.epoch);
  env["POD_ACCELERATOR"] = plan.accelerator.ToString();
  env["POD_SLICE"] = SliceText(plan.pod, plan.placement);
  std::string slices = env["POD_SLICE"];
  for (const core::LaunchPlan::Slice& s : plan.more_slices) {
    slices += ";" + SliceText(s.pod, s.placement);
  }
  env["POD_SLICES"] = slices;
  env["POD_NUM_SLICES"] = std::to_string(1 + plan.more_slices.size());
  env["POD_HOSTS"] = FormatHostSequence(plan.pod_hosts);  // each slice's with its POD_SLICES pod
  env["POD_CHECKPOINT_URL"] = ckpt;
  env.erase("POD_CHECKPOINT_DIR");
  if (ckpt.starts_with("file://")) {
    std::string dir = ckpt.substr(7);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    env["POD_CHECKPOINT_DIR"] = dir + "/job-" + job_id;
  }
  env["POD_RESTART_COUNT"] = std::to_string(plan.restarts + plan.preemptions);
  env["POD_LAUNCHER"] = std::string(core::LauncherName(plan.launcher));

  // The framework contract: torchrun's names, jax.distributed's, and the worker list of
  // TF_CONFIG (POD_RANK_ADDRS; `podworker rank` adds each rank's task index).
  const int world = static_cast<int>(plan.hosts.size()) * plan.ranks_per_host;
  std::string host_addrs, rank_addrs;
  for (HostId h : plan.hosts) {
    const std::string addr = AddressOf(h, rsh_endpoints);
    host_addrs += (host_addrs.empty() ? "" : ",") + addr;
    for (int local = 0; local < plan.ranks_per_host; ++local) {
      rank_addrs += (rank_addrs.empty() ? "" : ",") + addr + ":" +
                    std::to_string(Port(h, 2 + local));
    }
  }
  const HostId first = plan.hosts.empty() ? HostId(0) : plan.hosts.front();
  const std::string master = AddressOf(first, rsh_endpoints);
  env["POD_HOST_ADDRS"] = host_addrs;
  if (plan.ranks_per_host + 2 <= options_.ports_per_host) env["POD_RANK_ADDRS"] = rank_addrs;
  env["WORLD_SIZE"] = std::to_string(world);
  env["LOCAL_WORLD_SIZE"] = std::to_string(plan.ranks_per_host);
  env["MASTER_ADDR"] = master;
  env["MASTER_PORT"] = std::to_string(Port(first, 0));
  env["JAX_COORDINATOR_ADDRESS"] = master + ":" + std::to_string(Port(first, 1));
  env["JAX_NUM_PROCESSES"] = std::to_string(world);
  if (!plan.more_slices.empty()) {
    // Multislice as Cloud TPU names it; each rank's MEGASCALE_SLICE_ID is `podworker rank`'s.
    env["MEGASCALE_NUM_SLICES"] = env["POD_NUM_SLICES"];
    env["MEGASCALE_COORDINATOR_ADDRESS"] = master;
  }
  if (plan.array) {
    env["POD_ARRAY_ID"] = std::to_string(plan.array->array_id.value());
    env["POD_ARRAY_INDEX"] = std::to_string(plan.array->index);
  }
  return env;
}

size_t LaunchComposer::LargestLaunchBytes(const core::JobSpec& spec,
                                          const pod::AcceleratorType& type,
                                          const std::string& pod_name) const {
  constexpr int64_t kBigId = std::numeric_limits<int64_t>::max();
  constexpr int kBigCount = 1'000'000'000;  // restarts + preemptions still fits an int
  // Every field named (AcceleratorType has no default, so the plan is built in one piece).
  core::LaunchPlan plan{.job = JobEpoch{JobId(kBigId), kBigId},
                        .accelerator = type,
                        .pod = pod_name,
                        .placement = pod::Placement{{kMaxHostIndex, kMaxHostIndex}, type.shape()},
                        .hosts = {},
                        .pod_hosts = {},
                        .command = spec.command,
                        .args = spec.args,
                        .env = spec.env,
                        .ranks_per_host = spec.ranks_per_host,
                        .launcher = spec.launcher,
                        .grace_period = spec.grace_period,
                        .restarts = kBigCount,
                        .preemptions = kBigCount,
                        .array = core::ArrayTask{JobId(kBigId), kBigCount, 0, ""},
                        .user = spec.user,
                        .more_slices = {},
                        .zone = {},
                        .checkpoint_store = {}};
  for (int k = 1; k < spec.slices; ++k) plan.more_slices.push_back({pod_name, plan.placement});
  std::map<HostId, std::string> endpoints;
  for (int i = 0; i < type.hosts() * spec.slices; ++i) {
    // Distinct hosts with the most digits a fleet id (and a pod's host index) has.
    const HostId h(kMaxFleetHostId - i);
    plan.hosts.push_back(h);
    plan.pod_hosts.push_back(HostId(kMaxHostIndex - i % type.hosts()));
    endpoints[h] = "tcp://255.255.255.255:65535";
  }
  // A job without a URL of its own gets one of its user's prefixes (POD_CHECKPOINT_URL and, for
  // file://, POD_CHECKPOINT_DIR): the largest launch of them.
  std::vector<std::string> stores{""};
  if (!spec.env.contains("POD_CHECKPOINT_URL")) {
    stores = options_.checkpoint_stores.UserPrefixes(spec.user.value());
  }
  size_t largest = 0;
  for (std::string& store : stores) {
    plan.checkpoint_store = std::move(store);
    bus::Envelope envelope;
    *envelope.mutable_launch() = Compose(plan, endpoints, std::string(64, 'f'));
    largest = std::max(largest, envelope.ByteSizeLong());
  }
  return largest;
}

}  // namespace podsched::daemon
