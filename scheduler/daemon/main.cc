// podsched: the scheduler daemon. Wires the configuration, the job store, the engine (scheduler
// thread) and the HTTP server (main thread) together; see docs/api.md.
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <zmq.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/big_buffer.h"
#include "common/host_list.h"
#include "common/steady_wall_clock.h"
#include "scheduler/daemon/agent_keys.h"
#include "scheduler/daemon/auth.h"
#include "scheduler/daemon/bus_server.h"
#include "scheduler/daemon/config.h"
#include "scheduler/daemon/daemon.h"
#include "scheduler/daemon/data_layout.h"
#include "scheduler/daemon/engine.h"
#include "scheduler/daemon/http_server.h"
#ifdef PODSCHED_HAVE_JOBDB
#include "store/jobdb/sqlite_job_repository.h"
#endif

namespace fs = std::filesystem;
using namespace podsched;
using namespace podsched::daemon;

namespace {

// Reads var/admin.token, or creates it (mode 0600) and prints the new token once.
Result<std::string> AdminToken(const std::string& data_dir) {
  fs::path path = fs::path(data_dir) / "admin.token";
  if (std::ifstream in(path); in) {
    std::string token;
    std::getline(in, token);
    if (token.empty()) return InvalidArgument(path.string() + " is empty; delete it to regenerate");
    return token;
  }
  std::string token = NewToken();
  // fsync'd file and directory (audit L8: an empty admin.token after a power loss stopped the
  // next start); never replaces one another process wrote meanwhile.
  if (Status s = WritePrivateFile(path.string(), token + "\n", /*replace=*/false); !s.ok()) {
    return std::unexpected(s.WithContext("creating the admin token"));
  }
  std::cout << "podsched: generated the admin token (stored in " << path.string()
            << ", shown only now): " << token << std::endl;
  return token;
}

// The dashboard's directory: the configured one, else web/ beside the binary's tree (installed:
// <prefix>/share/podsched/web; build tree: <source>/build/scheduler/daemon/../../../web), else the
// source tree it was built from. "" when disabled or not found.
std::string FindWebRoot(const std::string& configured) {
  if (configured == "off") return "";
  auto has_dashboard = [](const fs::path& dir) {
    std::error_code ec;
    return fs::is_regular_file(dir / "static" / "index.html", ec);
  };
  if (!configured.empty()) return fs::absolute(configured).lexically_normal().string();
  std::error_code ec;
  fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  std::vector<fs::path> candidates;
  if (!ec) {
    candidates.push_back(exe_dir / ".." / "share" / "podsched" / "web");
    candidates.push_back(exe_dir / ".." / ".." / ".." / "web");
  }
#ifdef PODSCHED_SOURCE_WEB_DIR
  candidates.emplace_back(PODSCHED_SOURCE_WEB_DIR);
#endif
  for (const auto& dir : candidates) {
    if (has_dashboard(dir)) return fs::weakly_canonical(dir).string();
  }
  return "";
}

Result<KeyFile> ZmqKeyPair() {
  char pub[41] = {}, sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0) {
    return Error(StatusCode::kUnavailable, "libzmq was built without CURVE support");
  }
  KeyFile k;
  k.public_key = pub;
  k.secret_key = sec;
  return k;
}

int Fail(const Status& s);

// `podsched agent enroll|revoke|list` (docs/deploy.md, "Keys and enrolment"): edits
// <data_dir>/agents.keys, which the running daemon re-reads; no restart needed.
int AgentCommand(const Config& config, const std::string& verb, const std::vector<std::string>& ids,
                 const std::string& out, const std::string& out_dir, std::string bus,
                 const std::string& hosts_text, const std::string& pod_name) {
  if (!config.bus.curve) {
    return Fail(Status(StatusCode::kFailedPrecondition,
                       "bus.curve is off in this configuration: agents need no enrolment"));
  }
  if (verb == "list") {
    auto agents = ReadAgentKeys(AgentKeysPath(config.data_dir));
    if (!agents) return Fail(agents.error());
    for (const auto& a : *agents) {
      std::cout << a.agent_id << " " << a.public_key << " hosts "
                << (a.hosts ? FormatHostRanges(*a.hosts) : "any") << " of "
                << (a.pod.empty() ? "any pod" : "pod " + a.pod) << "\n";
    }
    return 0;
  }
  if (ids.empty()) return Fail(Status(StatusCode::kInvalidArgument, "give --agent-id"));
  if (verb == "revoke") {
    for (const auto& id : ids) {
      if (Status s = RevokeAgent(config.data_dir, id); !s.ok()) return Fail(s);
      std::cout << "podsched: revoked agent " << id
                << " (a running podsched drops its messages within a second)\n";
    }
    return 0;
  }
  if (ids.size() > 1 && out_dir.empty()) {
    return Fail(Status(StatusCode::kInvalidArgument, "several --agent-id need --out-dir"));
  }
  if (bus.empty()) bus = config.bus_address;
  std::optional<std::vector<int32_t>> hosts;
  if (!pod_name.empty() && hosts_text.empty()) {
    return Fail(Status(StatusCode::kInvalidArgument, "--pod needs --hosts (the pod's hosts it serves)"));
  }
  if (!hosts_text.empty()) {
    auto parsed = ParseHostRanges(hosts_text);
    if (!parsed) return Fail(parsed.error().WithContext("--hosts"));
    hosts = std::move(*parsed);
    // On a fleet every pod has a host 0: the hosts are bound to their pod.
    if (pod_name.empty() && config.pods.size() > 1) {
      return Fail(Status(StatusCode::kInvalidArgument,
                         "this podsched serves " + std::to_string(config.pods.size()) +
                             " pods: give --pod, the pod whose hosts --hosts names"));
    }
    const auto pod = std::find_if(config.pods.begin(), config.pods.end(), [&](const PodConfig& p) {
      return pod_name.empty() || p.name == pod_name;
    });
    if (pod == config.pods.end()) {
      return Fail(Status(StatusCode::kNotFound, "--pod: the configuration has no pod '" +
                                                    pod_name + "'"));
    }
    const int pod_hosts = pod->host_rows * pod->host_cols;
    if (hosts->back() >= pod_hosts) {
      return Fail(Status(StatusCode::kInvalidArgument,
                         "--hosts: pod " + pod->name + " has hosts 0-" +
                             std::to_string(pod_hosts - 1) + ", not " +
                             std::to_string(hosts->back())));
    }
  } else {
    std::cerr << "podsched: warning: enrolling without --hosts: the agent may register any host "
                 "of the pod (and so receive any job's launch); give the hosts it serves, e.g. "
                 "--hosts 0-15\n";
  }
  for (const auto& id : ids) {
    auto k = EnrollAgent(config.data_dir, id, bus, ZmqKeyPair, hosts, pod_name);
    if (!k) return Fail(k.error());
    const std::string text = FormatKeyFile(
        *k, "podworker key file for agent " + id + " (podsched agent enroll). Secret: keep it\n"
            "owned by the account that runs podworker, mode 0600; start podworker --bus-key-file "
            "FILE.");
    const std::string path = !out.empty() ? out
                             : !out_dir.empty() ? (fs::path(out_dir) / (id + ".key")).string()
                                                : "";
    if (path.empty()) {
      std::cout << text;
      continue;
    }
    if (Status s = WritePrivateFile(path, text, /*replace=*/false); !s.ok()) {
      (void)RevokeAgent(config.data_dir, id);  // nobody holds the key: undo the enrolment
      return Fail(s);
    }
    std::cerr << "podsched: enrolled agent " << id << " for hosts "
              << (hosts ? FormatHostRanges(*hosts) : "any")
              << (pod_name.empty() ? "" : " of pod " + pod_name) << "; key file " << path
              << " (mode 0600)\n";
  }
  return 0;
}

int Fail(const Status& s) {
  std::cerr << "podsched: " << s.message() << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Everything podsched creates (the job database and its WAL, the admin token, the data dir,
  // stored logs) is its owner's alone, also outside systemd: the token was briefly readable
  // between its write and a chmod, the database world-readable.
  ::umask(077);
  CLI::App app("podsched: the TPU pod scheduler daemon (HTTP API, /metrics, event stream)");
  std::string config_path, data_dir, listen, bus_address;
  int port = -1;
  std::string init_path;
  bool init = false;
  app.add_option("--config", config_path, "YAML configuration file (default: embedded defaults)");
  app.add_option("--data-dir", data_dir, "data directory (default ./var)");
  app.add_option("--listen", listen, "listen address (default 127.0.0.1)");
  app.add_option("--port", port, "HTTP port (default 8470; 0: ephemeral)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--bus", bus_address,
                 "worker bus address (default tcp://127.0.0.1:8471; tcp://127.0.0.1:* ephemeral)");
  app.add_flag("--init", init, "write a starter configuration file and exit");
  app.add_option("--init-file", init_path, "where --init writes (default podsched.yaml)");
  app.fallthrough();
  CLI::App* agent_cmd = app.add_subcommand("agent", "enrol, revoke and list worker agents (CURVE)");
  agent_cmd->require_subcommand(1);
  agent_cmd->fallthrough();
  std::vector<std::string> agent_ids;
  std::string key_out, key_out_dir, key_bus, key_hosts, key_pod;
  CLI::App* enroll = agent_cmd->add_subcommand(
      "enroll", "new key pair for an agent, bound to its id; writes its key file");
  enroll->add_option("--agent-id", agent_ids, "agent id (repeatable with --out-dir)")->required();
  enroll->add_option("--out", key_out, "key file to write (mode 0600; default: stdout)");
  enroll->add_option("--out-dir", key_out_dir, "directory for ID.key files");
  enroll->add_option("--hosts", key_hosts,
                     "the only hosts the agent may register, e.g. 0-15 (as its podworker --hosts; "
                     "default: any host, with a warning)");
  enroll->add_option("--pod", key_pod,
                     "the pod whose hosts --hosts names (as its podworker --pod; required on a "
                     "fleet of several pods)");
  enroll->add_option("--bus-address", key_bus,
                     "bus address the agent connects to (default: bus.address)");
  CLI::App* revoke = agent_cmd->add_subcommand("revoke", "remove an agent's key");
  revoke->add_option("agent-id", agent_ids, "agent id")->required();
  CLI::App* list = agent_cmd->add_subcommand("list", "enrolled agents and their public keys");
  for (CLI::App* sub : {enroll, revoke, list}) sub->fallthrough();
  CLI11_PARSE(app, argc, argv);
  // The daemon's job table grows to hundreds of MB: on huge pages (common/big_buffer.h). Not for
  // --init and the agent commands, which exit at once (the restart doubles the start: 15 -> 30 ms).
  if (!init && !agent_cmd->parsed()) podsched::RestartWithHugePageHeap(argv);

  if (init) {
    std::string path = init_path.empty() ? "podsched.yaml" : init_path;
    if (fs::exists(path))
      return Fail(Status(StatusCode::kAlreadyExists, path + " exists; not overwriting"));
    std::ofstream out(path);
    out << StarterConfigYaml();
    if (!out) return Fail(Status(StatusCode::kUnavailable, "cannot write " + path));
    std::cout << "podsched: wrote " << path << "; start with: podsched --config " << path << "\n";
    return 0;
  }

  Config config;
  if (!config_path.empty()) {
    auto loaded = LoadConfigFile(config_path);
    if (!loaded) return Fail(loaded.error());
    config = *loaded;
  }
  if (!data_dir.empty()) config.data_dir = data_dir;
  if (!listen.empty()) config.listen_address = listen;
  if (port >= 0) config.port = port;
  if (!bus_address.empty()) config.bus_address = bus_address;

  config.data_dir = fs::absolute(config.data_dir).lexically_normal().string();
  // Private state stays private, while each user's job reaches its own prefix of the default
  // file:// store inside the data dir (data_layout.h).
  std::vector<std::string> stores{DefaultCheckpointUrl(config)};
  for (const auto& [zone, url] : config.zone_checkpoint_urls) stores.push_back(url);
  for (const std::string& store : stores) {  // each zone's store as the default's
    auto layout = PrepareDataLayout(config.data_dir, store, DefaultLogUrl(config));
    if (!layout) return Fail(layout.error());
    for (const std::string& line : layout->changed) std::cerr << "podsched: " << line << "\n";
    for (const std::string& line : layout->warnings) {
      std::cerr << "podsched: warning: " << line << "\n";
    }
  }
  if (agent_cmd->parsed()) {
    const std::string verb = enroll->parsed() ? "enroll" : revoke->parsed() ? "revoke" : "list";
    return AgentCommand(config, verb, agent_ids, key_out, key_out_dir, key_bus, key_hosts,
                        key_pod);
  }
  if (config.bus.curve) {
    // CURVE by default: the key pair is made on first start; agents pin its public key.
    if (config.bus.curve_secret_key.empty()) {
      bool created = false;
      auto key = LoadOrCreateServerKey(config.data_dir, ZmqKeyPair, &created);
      if (!key) return Fail(key.error());
      config.bus.curve_secret_key = key->secret_key;
      if (created) {
        std::cout << "podsched: generated the bus key pair (" << ServerKeyPath(config.data_dir)
                  << "); public key " << key->public_key << std::endl;
      }
    }
    config.bus.agent_keys_file = AgentKeysPath(config.data_dir);
  }
  const std::string web_root_setting = config.web_root;
  config.web_root = FindWebRoot(config.web_root);
  auto token = AdminToken(config.data_dir);
  if (!token) return Fail(token.error());
  std::vector<UserConfig> users = config.users;
  if (std::none_of(users.begin(), users.end(), [](auto& u) { return u.name == "admin"; })) {
    UserConfig admin;
    admin.name = "admin";
    admin.token_sha256 = Sha256Hex(*token);
    admin.admin = true;
    users.push_back(std::move(admin));
  }

  std::string db_path = (fs::path(config.data_dir) / "podsched.db").string();
#ifdef PODSCHED_HAVE_JOBDB
  jobdb::JobDbOptions db_options;
  for (const PodConfig& pod : config.pods) db_options.pods.push_back(pod.name);  // fleet order
  auto opened = jobdb::SqliteJobRepository::Open(db_path, db_options);
  if (!opened) return Fail(opened.error());
  jobdb::SqliteJobRepository* sqlite = opened->get();
  std::unique_ptr<core::JobRepository> repo = std::move(*opened);
  // Group commit: the batches of every request queued on the scheduler thread share one
  // transaction (one fsync).
  BufferingRepository::CommitAll commit_all =
      [sqlite](std::span<const core::StoreBatch* const> batches) {
        return sqlite->CommitAll(batches);
      };
#else
  spdlog::warn("built without store/jobdb: jobs are kept in memory only (not {})", db_path);
  std::unique_ptr<core::JobRepository> repo = std::make_unique<core::InMemoryJobRepository>();
  BufferingRepository::CommitAll commit_all;
#endif

  // Timers and stored times on one clock that a step of the system clock does not move (H4 of
  // the 2026-12 audit: a 30 s step forward expired every agent and requeued their jobs).
  const RealClock wall_clock;
  const RealMonotonicClock monotonic_clock;
  const SteadyWallClock clock(wall_clock, monotonic_clock);
#ifdef PODSCHED_HAVE_JOBDB
  core::AccountRepository* accounts = sqlite;  // users and tokens in the same database
#else
  core::AccountRepository* accounts = nullptr;  // in memory
#endif
  auto engine = Engine::Create(config, users, repo.get(), clock.Now(), /*group_commit=*/true,
                               commit_all, accounts);
  if (!engine) return Fail(engine.error());
  for (const std::string& name : (*engine)->shadowed_users()) {
    spdlog::warn("user {} is configured in the configuration file and also stored (made with "
                 "podctl admin user add): the configured one is used", name);
  }
  spdlog::info("loaded {} jobs from {}", (*engine)->scheduler().jobs().size(), db_path);
  for (const core::QuarantinedJob& q : (*engine)->scheduler().quarantined()) {
    spdlog::warn("job {} left out (quarantined; its rows stay in {}): {}", q.id.value(), db_path,
                 q.reason);
  }

  auto bus = BusServer::Bind(config.bus_address, config.bus);
  if (!bus) return Fail(bus.error());
  BusServer* bus_server = bus->get();
  (*engine)->SetBusSender(
      [bus_server](BusOutgoing m) { bus_server->Send(m.agent_id, m.bytes); });
  (*engine)->SetEnrolledHosts(
      [bus_server](const std::string& agent_id) { return bus_server->EnrolledHostsOf(agent_id); });
  const Daemon* daemon_for_metrics = nullptr;  // set below, before anything is served
  (*engine)->SetBusIoCounters([bus_server, &daemon_for_metrics] {
    Engine::BusIoCounters io{bus_server->unroutable(), bus_server->rejected_keys(),
                             bus_server->rejected_agent_ids()};
    io.unbound_routes = bus_server->unbound_routes();
    io.overloaded = daemon_for_metrics ? daemon_for_metrics->bus_overloaded() : 0;
    io.control_overloaded = daemon_for_metrics ? daemon_for_metrics->bus_control_overloaded() : 0;
    return io;
  });

  boost::asio::io_context io(1);
  int exit_code = 0;
  std::unique_ptr<HttpServer> server;
  Daemon daemon(std::move(*engine), &clock, std::chrono::milliseconds(config.tick_interval_ms),
                [&io, &server, &exit_code] {
                  boost::asio::post(io, [&] {
                    spdlog::critical("the job store failed; exiting so the state is reloaded");
                    exit_code = 1;
                    if (server) server->Stop();
                    io.stop();
                  });
                });
  daemon_for_metrics = &daemon;
  bus_server->Run([&daemon](std::string agent, std::string bytes, bool well_framed) {
    daemon.PostBusMessage(std::move(agent), std::move(bytes), well_framed);
  });
  std::cout << "podsched bus on " << bus_server->endpoint() << std::endl;
  HttpServerOptions options{config.listen_address, config.port, config.limits.max_body_bytes,
                            config.limits.max_header_bytes,
                            static_cast<size_t>(config.limits.max_connections),
                            static_cast<size_t>(config.limits.max_connections_per_address)};
  auto started = HttpServer::Start(io, options, &daemon);
  if (!started) return Fail(started.error());
  std::error_code ec;
  if (config.web_root.empty()) {
    if (web_root_setting != "off") {
      spdlog::warn("no dashboard: web/ not found (set web_root in the configuration)");
    }
  } else if (!fs::is_regular_file(fs::path(config.web_root) / "static" / "index.html", ec)) {
    spdlog::warn("no dashboard: web_root {} has no static/index.html", config.web_root);
  } else {
    std::cout << "podsched dashboard on http://" << config.listen_address << ":"
              << (*started)->port() << "/ (files from " << config.web_root << ")" << std::endl;
  }
  server = std::move(*started);
  std::cout << "podsched listening on http://" << config.listen_address << ":" << server->port()
            << std::endl;
  spdlog::info("worker bus on {}{}; data in {}", bus_server->endpoint(),
               config.bus.curve ? " (CURVE: enrolled agents only)" : " (plain TCP: bus.curve is off)",
               config.data_dir);

  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& e, int sig) {
    if (e) return;
    spdlog::info("signal {}: shutting down", sig);
    server->Stop();
    io.stop();
  });
  io.run();
  server->Stop();
  daemon.Stop();
  server.reset();
  bus->reset();  // after the daemon: nothing sends any more
  spdlog::info("stopped");
  return exit_code;
}
