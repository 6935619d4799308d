#include "scheduler/daemon/config.h"

#include <yaml-cpp/yaml.h>

#include "common/user_names.h"
#include "common/yaml_reader.h"
#include "pod/fleet_yaml.h"
#include "scheduler/daemon/launch_composer.h"

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace podsched::daemon {
namespace {

#define PODSCHED_TRY(expr)                                        \
  do {                                                            \
    if (Status s_ = (expr); !s_.ok()) return std::unexpected(s_); \
  } while (0)

Result<core::Quota> ParseQuota(const YAML::Node& n, const std::string& section) {
  PODSCHED_TRY(YamlCheckKeys(n, section, {"on_demand_cores", "preemptible_cores"}));
  core::Quota q;
  PODSCHED_TRY(YamlRead(n, "on_demand_cores", section, q.on_demand_cores));
  PODSCHED_TRY(YamlRead(n, "preemptible_cores", section, q.preemptible_cores));
  if (q.on_demand_cores < 0 || q.preemptible_cores < 0) {
    return InvalidArgument(section + ": quotas must be >= 0");
  }
  return q;
}

Result<UserConfig> ParseUser(const YAML::Node& n, size_t index) {
  std::string section = "users[" + std::to_string(index) + "]";
  PODSCHED_TRY(YamlCheckKeys(n, section, {"name", "token_sha256", "role", "unix_user"}));
  UserConfig user;
  std::string role = "user";
  PODSCHED_TRY(YamlRead(n, "name", section, user.name));
  PODSCHED_TRY(YamlRead(n, "token_sha256", section, user.token_sha256));
  PODSCHED_TRY(YamlRead(n, "role", section, role));
  PODSCHED_TRY(YamlRead(n, "unix_user", section, user.unix_user));
  if (!IsPathSafeUserName(user.name)) {
    return InvalidArgument(section + ".name: '" + user.name +
                           "' must be 1..64 of [A-Za-z0-9._-] (it names the user's "
                           "checkpoint prefix)");
  }
  if (!user.unix_user.empty() && !IsUnixUserName(user.unix_user)) {
    return InvalidArgument(section + ".unix_user: '" + user.unix_user +
                           "' is not a Unix account name (1..32 of [a-z0-9_-], starting "
                           "with a letter or _)");
  }
  if (user.token_sha256.size() != 64 ||
      user.token_sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return InvalidArgument(section +
                           ".token_sha256: expected 64 lower-case hex digits "
                           "(sha256sum of the token)");
  }
  if (role != "user" && role != "admin") {
    return InvalidArgument(section + ".role: '" + role + "' is not a role; valid: user, admin");
  }
  user.admin = role == "admin";
  return user;
}

bool IsStoreUrl(std::string_view url) {
  return (url.starts_with("file:///") || url.starts_with("s3://")) &&
         url.find_first_of(" \t\r\n") == std::string_view::npos;
}

// `zones: {ZONE: {checkpoint_url: URL}}`, after the pods (each ZONE must be one of theirs).
Status ParseZones(const YAML::Node& n, Config& c) {
  if (!n.IsMap()) {
    return ToStatus(InvalidArgument("zones: expected a mapping zone -> {checkpoint_url: URL}"));
  }
  std::set<std::string> fleet_zones;
  for (const PodConfig& pod : c.pods) {
    if (!pod.zone.empty()) fleet_zones.insert(pod.zone);
  }
  for (const auto& kv : n) {
    auto name = YamlKey(kv.first, "zones");
    if (!name) return name.error();
    const std::string section = "zones." + *name;
    if (!fleet_zones.contains(*name)) {
      std::string known;
      for (const std::string& z : fleet_zones) known += (known.empty() ? "" : ", ") + z;
      return ToStatus(InvalidArgument(section + ": no pod of the fleet is in zone '" + *name +
                                      "' (its zones: " + (known.empty() ? "none" : known) + ")"));
    }
    if (Status s = YamlCheckKeys(kv.second, section, {"checkpoint_url"}); !s.ok()) return s;
    std::string url;
    if (Status s = YamlRead(kv.second, "checkpoint_url", section, url); !s.ok()) return s;
    if (!IsStoreUrl(url)) {
      return ToStatus(InvalidArgument(section +
                                      ".checkpoint_url: expected file:///PATH or s3://BUCKET/... "
                                      "without spaces, got '" + url + "'"));
    }
    c.zone_checkpoint_urls[*name] = url;
  }
  return Status::Ok();
}

Status ParseScheduler(const YAML::Node& n, Config& c) {
  const std::string section = "scheduler";
  Status s = YamlCheckKeys(n, section,
                       {"profile", "tick_interval_ms", "min_runtime_before_preemption_seconds",
                        "preemptible_lifetime_hours", "reclaim_rate_per_hour",
                        "retry_backoff_base_seconds", "seed", "default_quota",
                        "max_active_jobs_per_user", "max_active_spec_bytes_per_user",
                        "max_jobs_created_per_user_per_hour", "ended_job_retention_hours",
                        "defrag_budget_core_seconds_per_hour", "egress_usd_per_gb"});
  if (!s.ok()) return s;
  double min_runtime = ToSeconds(c.scheduler.min_runtime_before_preemption);
  double lifetime_h = ToSeconds(c.scheduler.preemptible_lifetime) / 3600;
  double backoff = ToSeconds(c.scheduler.retry_backoff_base);
  double retention_h = ToSeconds(c.scheduler.ended_job_retention) / 3600;
  for (Status r : {YamlRead(n, "profile", section, c.scheduler.profile),
                   YamlRead(n, "tick_interval_ms", section, c.tick_interval_ms),
                   YamlRead(n, "min_runtime_before_preemption_seconds", section, min_runtime),
                   YamlRead(n, "preemptible_lifetime_hours", section, lifetime_h),
                   YamlRead(n, "reclaim_rate_per_hour", section, c.scheduler.reclaim_rate_per_hour),
                   YamlRead(n, "retry_backoff_base_seconds", section, backoff),
                   YamlRead(n, "seed", section, c.scheduler.seed),
                   YamlRead(n, "max_active_jobs_per_user", section,
                        c.scheduler.max_active_jobs_per_user),
                   YamlRead(n, "max_active_spec_bytes_per_user", section,
                        c.scheduler.max_active_spec_bytes_per_user),
                   YamlRead(n, "max_jobs_created_per_user_per_hour", section,
                        c.scheduler.max_jobs_created_per_user_per_hour),
                   YamlRead(n, "ended_job_retention_hours", section, retention_h),
                   YamlRead(n, "defrag_budget_core_seconds_per_hour", section,
                            c.scheduler.defrag_budget_core_seconds_per_hour)}) {
    if (!r.ok()) return r;
  }
  if (const auto& e = n["egress_usd_per_gb"]) {
    const std::string where = section + ".egress_usd_per_gb";
    pod::EgressPricing& p = c.scheduler.egress;
    for (Status r :
         {YamlCheckKeys(e, where, {"between_zones", "between_regions", "between_continents"}),
          YamlRead(e, "between_zones", where, p.usd_per_gb_between_zones),
          YamlRead(e, "between_regions", where, p.usd_per_gb_between_regions),
          YamlRead(e, "between_continents", where, p.usd_per_gb_between_continents)}) {
      if (!r.ok()) return r;
    }
    for (double price : {p.usd_per_gb_between_zones, p.usd_per_gb_between_regions,
                         p.usd_per_gb_between_continents}) {
      if (!(price >= 0 && price <= 1000)) {
        return ToStatus(InvalidArgument(where + ": prices must be 0..1000 dollars per GB"));
      }
    }
  }
  c.scheduler.min_runtime_before_preemption = FromSeconds(min_runtime);
  c.scheduler.preemptible_lifetime = FromSeconds(lifetime_h * 3600);
  c.scheduler.retry_backoff_base = FromSeconds(backoff);
  // At least a second: 0 would mean "keep every ended job forever" (the core's podsim setting),
  // which is the unbounded growth this limit exists to stop.
  if (!(retention_h >= 1.0 / 3600) || retention_h > 24 * 365) {
    return Status(StatusCode::kInvalidArgument,
                  "scheduler.ended_job_retention_hours: must be from 0.000278 (1 s) to 8760 (a year)");
  }
  c.scheduler.ended_job_retention = FromSeconds(retention_h * 3600);
  if (n["default_quota"]) {
    auto q = ParseQuota(n["default_quota"], "scheduler.default_quota");
    if (!q) return q.error();
    c.scheduler.default_quota = *q;
  }
  if (c.scheduler.max_active_spec_bytes_per_user < (int64_t{1} << 20)) {
    return Status(StatusCode::kInvalidArgument,
                  "scheduler.max_active_spec_bytes_per_user: must be at least 1048576 (1 MiB)");
  }
  if (c.scheduler.max_jobs_created_per_user_per_hour < 1) {
    return Status(StatusCode::kInvalidArgument,
                  "scheduler.max_jobs_created_per_user_per_hour: must be at least 1");
  }
  if (c.scheduler.max_active_jobs_per_user < 1) {
    return Status(StatusCode::kInvalidArgument,
                  "scheduler.max_active_jobs_per_user: must be at least 1");
  }
  if (c.tick_interval_ms < 10 || c.tick_interval_ms > 60000) {
    return Status(StatusCode::kInvalidArgument, "scheduler.tick_interval_ms: must be 10..60000");
  }
  return Status::Ok();
}

Status ParseLimits(const YAML::Node& n, Limits& l) {
  const std::string section = "limits";
  Status s = YamlCheckKeys(n, section,
                       {"max_body_bytes", "max_header_bytes", "max_json_depth", "max_page_size",
                        "requests_per_second", "burst", "max_stream_clients",
                        "max_connections", "max_connections_per_address"});
  if (!s.ok()) return s;
  for (Status r : {YamlRead(n, "max_body_bytes", section, l.max_body_bytes),
                   YamlRead(n, "max_header_bytes", section, l.max_header_bytes),
                   YamlRead(n, "max_json_depth", section, l.max_json_depth),
                   YamlRead(n, "max_page_size", section, l.max_page_size),
                   YamlRead(n, "requests_per_second", section, l.requests_per_second),
                   YamlRead(n, "burst", section, l.burst),
                   YamlRead(n, "max_stream_clients", section, l.max_stream_clients),
                   YamlRead(n, "max_connections", section, l.max_connections),
                   YamlRead(n, "max_connections_per_address", section,
                        l.max_connections_per_address)}) {
    if (!r.ok()) return r;
  }
  if (l.max_json_depth < 2 || l.max_page_size < 1 || l.requests_per_second <= 0 || l.burst < 1 ||
      l.max_body_bytes < 1024 || l.max_connections < 1 || l.max_connections > 1000000 ||
      l.max_connections_per_address < 0 || l.max_connections_per_address > 1000000) {
    return Status(StatusCode::kInvalidArgument,
                  "limits: max_json_depth >= 2, max_page_size >= 1, requests_per_second > 0, "
                  "burst >= 1, max_body_bytes >= 1024, max_connections 1..1000000, "
                  "max_connections_per_address 0..1000000");
  }
  l.default_page_size = std::min(l.default_page_size, l.max_page_size);
  return Status::Ok();
}

Result<Config> ParseRoot(const YAML::Node& root) {
  Config c;
  if (!root || root.IsNull()) return c;
  PODSCHED_TRY(YamlCheckKeys(root, "the configuration",
                         {"listen", "bus", "data_dir", "default_checkpoint_url", "zones", "pods", "users",
                          "quotas", "scheduler", "limits",
                          "web_root"}));
  if (const auto& l = root["listen"]) {
    PODSCHED_TRY(YamlCheckKeys(l, "listen", {"address", "port"}));
    PODSCHED_TRY(YamlRead(l, "address", "listen", c.listen_address));
    PODSCHED_TRY(YamlRead(l, "port", "listen", c.port));
    if (c.port < 0 || c.port > 65535) return InvalidArgument("listen.port: must be 0..65535");
  }
  if (const auto& b = root["bus"]) {
    PODSCHED_TRY(YamlCheckKeys(b, "bus",
                           {"address", "heartbeat_interval_ms", "heartbeat_timeout_ms",
                            "reconcile_timeout_ms", "require_agents", "curve", "curve_secret_key",
                            "curve_agent_keys", "log_url", "job_ports"}));
    PODSCHED_TRY(YamlRead(b, "address", "bus", c.bus_address));
    PODSCHED_TRY(YamlRead(b, "heartbeat_interval_ms", "bus", c.bus.heartbeat_interval_ms));
    PODSCHED_TRY(YamlRead(b, "heartbeat_timeout_ms", "bus", c.bus.heartbeat_timeout_ms));
    PODSCHED_TRY(YamlRead(b, "reconcile_timeout_ms", "bus", c.bus.reconcile_timeout_ms));
    PODSCHED_TRY(YamlRead(b, "require_agents", "bus", c.bus.require_agents));
    PODSCHED_TRY(YamlRead(b, "curve", "bus", c.bus.curve));
    PODSCHED_TRY(YamlRead(b, "curve_secret_key", "bus", c.bus.curve_secret_key));
    PODSCHED_TRY(YamlRead(b, "curve_agent_keys", "bus", c.bus.curve_agent_keys));
    PODSCHED_TRY(YamlRead(b, "log_url", "bus", c.bus.log_url));
    std::string ports;
    PODSCHED_TRY(YamlRead(b, "job_ports", "bus", ports));
    if (!ports.empty()) {
      // from_chars, not sscanf: "%d" is undefined behaviour on a number beyond int.
      int first = 0, last = 0;
      const size_t dash = ports.find('-');
      auto number = [](std::string_view text, int& out) {
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        return !text.empty() && ec == std::errc() && end == text.data() + text.size();
      };
      if (dash == std::string::npos || !number(std::string_view(ports).substr(0, dash), first) ||
          !number(std::string_view(ports).substr(dash + 1), last) || first < 1024 ||
          last > 65535 || first > last) {
        return InvalidArgument("bus.job_ports: expected FIRST-LAST within 1024-65535, got '" +
                               ports + "'");
      }
      c.bus.job_port_first = first;
      c.bus.job_port_last = last;
    }
    if (!c.bus_address.starts_with("tcp://") && !c.bus_address.starts_with("ipc://")) {
      return InvalidArgument("bus.address: expected tcp://HOST:PORT (or ipc://PATH), got '" +
                             c.bus_address + "'");
    }
    if (c.bus.heartbeat_interval_ms < 10 || c.bus.heartbeat_interval_ms > 600000 ||
        c.bus.heartbeat_timeout_ms < 2 * c.bus.heartbeat_interval_ms ||
        c.bus.heartbeat_timeout_ms > 3600000 || c.bus.reconcile_timeout_ms < 0) {
      return InvalidArgument(
          "bus: heartbeat_interval_ms must be 10..600000, heartbeat_timeout_ms at least twice "
          "the interval (and at most 3600000), reconcile_timeout_ms >= 0");
    }
    if (!c.bus.curve && (!c.bus.curve_secret_key.empty() || !c.bus.curve_agent_keys.empty())) {
      return InvalidArgument(
          "bus: curve is off (plain TCP: any process that reaches the bus may act as an agent, "
          "and agents obey whatever answers at the address) but curve_secret_key or "
          "curve_agent_keys are set; remove them, or remove `curve: off`");
    }
    for (const std::string& key : c.bus.curve_agent_keys) {
      if (key.size() != 40) return InvalidArgument("bus.curve_agent_keys: expected 40-character Z85 keys");
    }
    if (!c.bus.curve_secret_key.empty() && c.bus.curve_secret_key.size() != 40) {
      return InvalidArgument("bus.curve_secret_key: expected a 40-character Z85 key");
    }
  }
  PODSCHED_TRY(YamlRead(root, "data_dir", "config", c.data_dir));
  PODSCHED_TRY(YamlRead(root, "default_checkpoint_url", "config", c.default_checkpoint_url));
  if (const auto& pods = root["pods"]) {
    auto fleet = pod::ParseFleetPods(pods, pod::UnnamedPods::kNumbered);
    if (!fleet) return std::unexpected(fleet.error());
    c.pods = std::move(*fleet);
  }
  {
    // Every host of the fleet gets its own block of job ports (launch_composer.h). The grids are
    // bounded by now (ParseFleetPods), and so is the number of pods.
    int64_t hosts = 0;
    for (const PodConfig& pod : c.pods) hosts += int64_t{pod.host_rows} * pod.host_cols;
    const int64_t range = int64_t{c.bus.job_port_last} - c.bus.job_port_first + 1;
    if (range / hosts < kMinPortSlotsPerHost) {
      const std::string what = c.pods.size() == 1 ? "pod " + c.pods.front().name
                                                  : "a fleet of " + std::to_string(c.pods.size()) +
                                                        " pods";
      return InvalidArgument("bus.job_ports: " + std::to_string(c.bus.job_port_first) + "-" +
                             std::to_string(c.bus.job_port_last) + " is too small for " + what +
                             ": each of its " + std::to_string(hosts) + " hosts needs at least " +
                             std::to_string(kMinPortSlotsPerHost) + " ports (" +
                             std::to_string(hosts * kMinPortSlotsPerHost) + " in all)");
    }
  }
  if (const auto& zones = root["zones"]) PODSCHED_TRY(ParseZones(zones, c));
  if (const auto& users = root["users"]) {
    if (!users.IsSequence()) return InvalidArgument("users: expected a list");
    std::set<std::string> names;
    for (size_t i = 0; i < users.size(); ++i) {
      auto u = ParseUser(users[i], i);
      if (!u) return std::unexpected(u.error());
      if (!names.insert(u->name).second) return InvalidArgument("users: '" + u->name + "' twice");
      c.users.push_back(*u);
    }
  }
  if (const auto& quotas = root["quotas"]) {
    if (!quotas.IsMap()) return InvalidArgument("quotas: expected a mapping user -> quota");
    for (const auto& kv : quotas) {
      auto name = YamlKey(kv.first, "quotas");
      if (!name) return std::unexpected(name.error());
      const std::string& user = *name;
      auto q = ParseQuota(kv.second, "quotas." + user);
      if (!q) return std::unexpected(q.error());
      c.quotas[user] = *q;
    }
  }
  if (const auto& s = root["scheduler"]) PODSCHED_TRY(ParseScheduler(s, c));
  if (const auto& l = root["limits"]) PODSCHED_TRY(ParseLimits(l, c.limits));
  PODSCHED_TRY(YamlRead(root, "web_root", "config", c.web_root));
  return c;
}

}  // namespace

Result<Config> ParseConfig(std::string_view yaml) {
  try {
    return ParseRoot(YAML::Load(std::string(yaml)));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("configuration is not valid YAML: ") + e.what());
  }
}

Result<Config> LoadConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read configuration file " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto c = ParseConfig(text.str());
  if (!c) return std::unexpected(c.error().WithContext(path));
  return c;
}

std::string StarterConfigYaml() {
  return R"(# podsched configuration (written by `podsched --init`). Every key is optional; these are
# the embedded defaults. See docs/api.md.
listen:
  address: 127.0.0.1
  port: 8470            # 0: an ephemeral port (printed on stdout)
bus:
  address: tcp://127.0.0.1:8471   # the worker bus (podworker); tcp://127.0.0.1:* ephemeral
  heartbeat_interval_ms: 1000
  heartbeat_timeout_ms: 10000     # an agent silent this long: its hosts are unhealthy
  reconcile_timeout_ms: 0         # after a restart; 0: the heartbeat timeout
  require_agents: true            # hosts without an agent are unhealthy ("no agent")
  log_url: ""                     # empty: file://<data_dir>/objects/logs
  job_ports: 20000-32767          # MASTER_PORT etc.: a share per host (at most 66, at least 10)
  curve: on                       # CurveZMQ: encrypted, only enrolled agents join (off: plain TCP)
# curve_secret_key: <Z85>         # default: the key pair in <data_dir>/bus.key, made on first start
# curve_agent_keys: [<Z85>, ...]  # extra keys not bound to an agent id (enrol instead:
#                                 # podsched agent enroll --agent-id ID --out ID.key)
data_dir: var           # SQLite job store var/podsched.db, admin token var/admin.token
default_checkpoint_url: ""        # empty: file://<data_dir>/objects/checkpoints
# A checkpoint store per zone of the fleet (docs/scheduler.md, "Zones and checkpoint stores"): a
# job keeps the store of the zone it first runs in; resuming elsewhere costs egress.
zones: {}
#  us-central1-b: {checkpoint_url: "s3://ckpt-us/podsched?endpoint=http://10.0.0.20:8080&region=us"}
# The fleet: one or more pods, each scheduled as one grid of hosts (docs/scheduler.md "A fleet of
# pods"). Each agent serves hosts of one pod, by the pod's own host ids.
pods:
  - name: pod0
    generation: v2      # v2 or v3
    host_rows: 8        # v2 full pod: 8x8 hosts (512 TensorCores)
    host_cols: 8
    zone: ""            # e.g. us-central1-b; informative for now
#  - name: dev          # standalone v2-8 devices: one host each, named dev-00 .. dev-99
#    host_rows: 1
#    host_cols: 1
#    count: 100
# Users authenticate with bearer tokens. Usually: podctl admin user add NAME (stored in the job
# database, revocable; docs/api.md "Users and tokens"). Users listed here are read-only bootstrap
# users (the API cannot disable them); store only the SHA-256 of a token:
#   token=$(openssl rand -hex 24); printf %s "$token" | sha256sum
users: []
#  - name: alice
#    token_sha256: <64 hex digits>
#    role: user         # user (own jobs) or admin (all jobs, quotas, users)
#    unix_user: alice   # the Unix account the user's jobs run as on the hosts (default: name)
quotas: {}
#  alice: {on_demand_cores: 40, preemptible_cores: 800}
scheduler:
  profile: fair-best-fit          # or fifo-first-fit
  tick_interval_ms: 200
  default_quota: {on_demand_cores: 40, preemptible_cores: 800}
  # Defragmentation: an on-demand job blocked only by fragmentation may move young preemptible
  # jobs (checkpoint, stop, start again on the free hosts) while what they lose stays within
  # this many core-seconds an hour. 0: off.
  defrag_budget_core_seconds_per_hour: 0
  # Checkpoints read or written across zones (a job away from its zone's store), per GB.
  egress_usd_per_gb: {between_zones: 0.01, between_regions: 0.02, between_continents: 0.08}
limits:
  max_body_bytes: 1048576
  max_json_depth: 32
  max_page_size: 500
  requests_per_second: 200        # per token (token bucket)
  burst: 400
web_root: ""            # dashboard files (web/ with static/ and node_modules/); empty: found
                        # beside the binary or in the source tree; "off": no dashboard
)";
}

std::string DefaultCheckpointUrl(const Config& config) {
  return config.default_checkpoint_url.empty()
             ? "file://" + config.data_dir + "/objects/checkpoints"
             : config.default_checkpoint_url;
}

std::string DefaultLogUrl(const Config& config) {
  return config.bus.log_url.empty() ? "file://" + config.data_dir + "/objects/logs"
                                    : config.bus.log_url;
}

}  // namespace podsched::daemon
