// podsched's configuration: YAML (yaml-cpp) with embedded defaults that work with no file at all
// (docs/api.md, "Configuration (YAML)"): HTTP on 127.0.0.1:8470, the bus on tcp://127.0.0.1:8471,
// data in ./var, one TPU v2 pod "pod0" of 8x8 hosts, no users besides the generated admin.
//
// Every key is optional; unknown keys are errors (a typo must not be silently ignored).
// Pure (parsing only; the caller reads the file). Thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "pod/accelerator.h"
#include "pod/fleet.h"
#include "scheduler/core/job.h"
#include "scheduler/core/scheduler.h"

namespace podsched::daemon {

struct UserConfig {
  std::string name;
  std::string token_sha256;  // lower-case hex SHA-256 of the bearer token
  bool admin = false;
  // The Unix account the user's jobs run as on the hosts (podworker); empty: `name`.
  std::string unix_user;
};

// One pod of the fleet podsched serves (pod/fleet.h): a name, a generation, a grid of hosts
// (a full pod, a part of one, or a standalone device of 1x1) and a zone. The `pods` section has
// the fleet file's schema (pod/fleet_yaml.h: `count: N` makes NAME-0..N-1); an unnamed entry i is
// "pod<i>".
using PodConfig = pod::FleetPodSpec;
inline PodConfig DefaultPod() { return {"pod0", pod::Generation::kV2, 8, 8, ""}; }

// Bounds on what a client may send (DESIGN: "bounded everything").
struct Limits {
  size_t max_body_bytes = 1 << 20;     // 413 above
  size_t max_header_bytes = 16 << 10;  // 431 above
  int max_json_depth = 32;
  int max_page_size = 500;
  int default_page_size = 100;
  double requests_per_second = 200;  // per token, token bucket
  double burst = 400;
  int max_stream_clients = 256;
  // Open HTTP connections; beyond it a new one gets 503 and is closed (podsched keeps its file
  // descriptors for the store and the bus).
  int max_connections = 2048;
  // Open HTTP connections from one address; beyond it a new one gets 503. 0 (the default): no
  // cap. Off by default: on one machine every user comes from 127.0.0.1, behind a reverse proxy
  // from the proxy's address, and a script's parallel requests (the dashboard test sends 100)
  // are busy connections; idle ones are handled by max_connections' eviction.
  int max_connections_per_address = 0;
};

// The worker bus (docs/bus.md).
struct BusConfig {
  int heartbeat_interval_ms = 1000;
  int heartbeat_timeout_ms = 10000;
  int reconcile_timeout_ms = 0;  // 0: the heartbeat timeout
  // Hosts no agent serves are unhealthy ("no agent"); false only for tests of the API alone.
  bool require_agents = true;
  // CurveZMQ on the bus (docs/deploy.md, "Keys and enrolment"): the ROUTER is a CURVE server;
  // agents enrolled in <data_dir>/agents.keys (each key bound to one agent id) or listed in
  // curve_agent_keys (not bound) may join. false (`curve: off`): plain TCP, no authentication.
  bool curve = true;
  std::string curve_secret_key;                // Z85; empty: <data_dir>/bus.key (made if missing)
  std::vector<std::string> curve_agent_keys;   // Z85 public keys allowed under any agent id
  std::string agent_keys_file;                 // set by podsched: <data_dir>/agents.keys
  std::string log_url;                         // empty: file://<data_dir>/objects/logs
  // Ports handed to jobs (MASTER_PORT, the JAX coordinator, each rank's own port): a block of
  // the same share of it per host of the fleet (launch_composer.h PortsPerHost), so no two live
  // jobs on a machine get the same port, even with the agents of several pods on it.
  int job_port_first = 20000;
  int job_port_last = 32767;
};


// The core's defaults, but for one: ended jobs leave the scheduler's memory an hour after they
// end (audit H1); the store keeps them (GET /jobs/{id} and its events read them back).
inline core::SchedulerConfig DaemonSchedulerDefaults() {
  core::SchedulerConfig config;
  config.ended_job_retention = std::chrono::hours(1);
  return config;
}

struct Config {
  std::string listen_address = "127.0.0.1";
  int port = 8470;                                   // 0: ephemeral
  std::string bus_address = "tcp://127.0.0.1:8471";  // port * (tcp://127.0.0.1:*): ephemeral
  BusConfig bus;
  std::string data_dir = "var";
  std::string default_checkpoint_url;  // empty: file://<data_dir>/objects/checkpoints
  // `zones: {ZONE: {checkpoint_url: URL}}`: a checkpoint store per zone of the fleet
  // (checkpoint_stores.h); a job keeps the store of the zone it first runs in.
  std::map<std::string, std::string> zone_checkpoint_urls;
  std::vector<PodConfig> pods = {DefaultPod()};  // the fleet, in order
  std::vector<UserConfig> users;
  std::map<std::string, core::Quota> quotas;  // per user; others get scheduler.default_quota
  core::SchedulerConfig scheduler = DaemonSchedulerDefaults();
  int tick_interval_ms = 200;
  Limits limits;
  // The dashboard's directory (web/ of the source tree: static/, node_modules/). Empty: podsched
  // looks beside its binary and in the source tree it was built from (main.cc); "off" disables.
  std::string web_root;
};

// Where a job's checkpoints go unless its spec names a place: default_checkpoint_url, or
// file://<data_dir>/objects/checkpoints when that is empty.
std::string DefaultCheckpointUrl(const Config& config);
// bus.log_url, or file://<data_dir>/objects/logs when that is empty.
std::string DefaultLogUrl(const Config& config);

// Parses YAML text over the defaults. Errors name the key and what is expected.
Result<Config> ParseConfig(std::string_view yaml);
// Reads and parses a file; errors name the file.
Result<Config> LoadConfigFile(const std::string& path);
// A commented starter configuration equal to the defaults (podsched --init).
std::string StarterConfigYaml();

}  // namespace podsched::daemon
