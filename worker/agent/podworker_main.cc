// podworker: the host agent (docs/podworker.md). Subcommands `rsh` (mpirun's rsh agent),
// `keygen` (a CurveZMQ key pair), `launch` and `rank` (exec_launcher.h); without one it runs the
// agent.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/env_contract.h"
#include "common/key_file.h"
#include "worker/agent/agent.h"
#include "worker/agent/bus_validate.h"
#include "worker/agent/child.h"
#include "worker/agent/exec_launcher.h"
#include "common/host_list.h"
#include "worker/agent/mpirun_argv.h"
#include "worker/agent/output_spool.h"
#include "worker/agent/rsh_client.h"

namespace {

using namespace podsched::agent;

int Keygen() {
  char pub[41] = {}, sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0) {
    std::fprintf(stderr, "podworker keygen: libzmq without CURVE support\n");
    return 1;
  }
  std::printf("public-key: %s\nsecret-key: %s\n", pub, sec);
  return 0;
}

// A key file (common/key_file.h): from `podsched agent enroll`, or `podworker keygen`'s output.
// It must be this account's alone: a key others can read lets them act as this agent.
bool ReadKeyFile(const std::string& path, podsched::KeyFile& keys, std::string& error) {
  struct stat st{};
  std::ifstream in(path);
  if (!in || stat(path.c_str(), &st) != 0) {
    error = "cannot read --bus-key-file " + path;
    return false;
  }
  if ((st.st_mode & 077) != 0 || st.st_uid != geteuid()) {
    error = "--bus-key-file " + path + " must be owned by this account (uid " +
            std::to_string(geteuid()) + ") with mode 0600 (chmod 600 " + path + ")";
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto parsed = podsched::ParseKeyFile(text.str());
  if (!parsed) {
    error = path + ": " + parsed.error().message();
    return false;
  }
  keys = *parsed;
  return true;
}

// The local address this machine reaches `bus` (tcp://HOST:PORT) from: what a job's peers on
// other machines can reach it at, unless --advertise says otherwise. A UDP connect() sends
// nothing; it only picks the route.
std::string AddressTowards(const std::string& bus, std::string& error) {
  const std::string rest = bus.starts_with("tcp://") ? bus.substr(6) : "";
  const size_t colon = rest.rfind(':');
  if (rest.empty() || colon == std::string::npos) return "127.0.0.1";  // ipc:// etc.
  const std::string host = rest.substr(0, colon), port = rest.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
    error = "cannot resolve the bus host '" + host + "' (give --advertise)";
    return "";
  }
  std::string ip;
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  socklen_t len = sizeof local;
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &local.sin_addr, text, sizeof text);
    ip = text;
  } else {
    error = "no route to the bus host '" + host + "' (give --advertise)";
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return ip;
}

// The agent's death kills every job on the machine (PDEATHSIG): when memory runs out, the OOM
// killer should take a job's process, not the agent (audit M12). Lowering the score needs
// CAP_SYS_RESOURCE (root, outside containers that drop it); without it the agent keeps its
// score. Children go back to 0
// (SpawnChild). The systemd unit sets the same (OOMScoreAdjust).
constexpr int kAgentOomScoreAdj = -900;

void ProtectFromOomKiller() {
  std::ofstream adj("/proc/self/oom_score_adj");
  adj << kAgentOomScoreAdj << std::flush;
  if (!adj) {
    spdlog::info("cannot lower podworker's OOM score to {} (needs CAP_SYS_RESOURCE): left as "
                 "it is", kAgentOomScoreAdj);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // `rsh` takes ssh-style arguments that no option parser should interpret.
  if (argc >= 2 && std::string(argv[1]) == "rsh") {
    return RshMain(std::vector<std::string>(argv + 2, argv + argc));
  }
  if (argc >= 2 && std::string(argv[1]) == "keygen") return Keygen();
  // `launch` and `rank` run user commands after "--"; no option parser either.
  if (argc >= 2 && std::string(argv[1]) == "launch") {
    return ExecLauncherMain(SelfPath(argv[0]), std::vector<std::string>(argv + 2, argv + argc));
  }
  if (argc >= 2 && std::string(argv[1]) == "rank") {
    return RankMain(std::vector<std::string>(argv + 2, argv + argc));
  }

  AgentOptions o;
  std::string hosts = "0-63", key_file;
  CLI::App app{"podworker: host agent of podsched (serves simulated hosts of a pod).\n"
               "Also: podworker rsh [ssh options] hN COMMAND...   (mpirun's rsh agent)\n"
               "      podworker keygen                         (CurveZMQ key pair)\n"
      "      podworker launch [--rsh P] -- COMMAND... (launcher of `launcher: exec` jobs)\n"
      "      podworker rank [--rank R] -- COMMAND... (sets a rank's variables, runs COMMAND)"};
  app.set_config("--config", "", "INI/TOML file with any of these options (long names)");
  app.add_option("--bus", o.bus, "ZeroMQ address of podsched's bus")->capture_default_str();
  app.add_option("--pod", o.pod, "Pod whose hosts this agent serves")->capture_default_str();
  app.add_option("--hosts", hosts, "Hosts served, e.g. 0-7,12")->capture_default_str();
  app.add_option("--agent-id", o.agent_id, "Agent id (default: <hostname>-<first host>)");
  app.add_option("--advertise", o.advertise,
                 "IPv4 address of this machine that jobs' peers reach it at (rsh and progress "
                 "endpoints, POD_HOST_ADDRS, MASTER_ADDR; default: the address it reaches the "
                 "bus from)");
  app.add_option("--state-dir", o.state_dir, "State directory (default ./var/worker/<agent id>)");
  app.add_option("--mpirun", o.mpirun, "mpirun to run")->capture_default_str();
  app.add_option("--mpirun-arg", o.mpirun_args, "Extra mpirun argument (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--mpi-subnet", o.mpi_subnet,
                 "CIDR for MPI traffic (default: /8 of a loopback, else /24 of --advertise)");
  app.add_option("--bus-server-key", o.bus_server_key,
                 "podsched's CURVE public key (Z85; default: the key file's server-key)");
  app.add_option("--bus-key-file", key_file,
                 "This agent's key file (podsched agent enroll: its id, the bus, the server key "
                 "and its key pair; mode 0600). Without it the bus is plain TCP");
  app.add_option("--rsh-port", o.rsh_port, "TCP port of the rsh server (0: any free port)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--start-timeout-ms", o.start_timeout_ms,
                 "A host of a slice whose rsh request never comes is released after this long")
      ->check(CLI::Range(1000, 3600 * 1000))
      ->capture_default_str();
  app.add_option("--stop-grace-seconds", o.stop_grace_seconds,
                 "On SIGTERM the agent preempts its jobs (SIGTERM to the ranks, exit reports) "
                 "and gives them at most this long; a second signal stops at once")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  app.add_flag("--jobs-as-agent-user", o.accounts.jobs_as_agent_user,
               "Run every job as the account podworker runs as, whoever submitted it (one "
               "user's machine; no isolation between users). Without it, podworker as root runs "
               "each job as its user's Unix account, and without root only that account's jobs");
  app.add_flag("--allow-root-jobs", o.accounts.allow_root,
               "Allow jobs to run as root (uid 0); refused otherwise");
  std::vector<std::string> denied_groups(std::begin(podsched::agent::kDefaultDeniedJobGroups),
                                         std::end(podsched::agent::kDefaultDeniedJobGroups));
  app.add_option("--deny-job-groups", denied_groups,
                 "Groups no job runs with: dropped from a job's supplementary groups, refused as "
                 "its primary group (comma-separated; \"\" for none)")
      ->delimiter(',')
      ->capture_default_str();
  uint32_t min_uid = o.accounts.min_uid;
  app.add_option("--min-job-uid", min_uid,
                 "Jobs of accounts with a lower uid (system accounts) are refused")
      ->capture_default_str();
  app.add_option("--pass-env", o.pass_env,
                 "Name of one of podworker's environment variables that every job gets "
                 "(repeatable; e.g. cloud credentials). Jobs get only PATH, LANG, LC_*, TZ, MPI "
                 "tuning (OMPI_MCA_*, PMIX_MCA_*, PRTE_MCA_*), these, and their own")
      ->allow_extra_args(false);
  app.add_flag("--kill-account-leftovers", o.kill_account_leftovers,
               "When the last job of an account on this agent ends, SIGKILL every process of "
               "that account on the machine (what escaped the job's tracking). Only where this "
               "is the one agent running jobs on the machine and users do not log in to it; "
               "never with --jobs-as-agent-user, for root or system accounts");
  app.add_option("--scratch-dir", o.scratch_dir,
                 "Root of per-user scratch directories (TMPDIR of the ranks; default "
                 "<state dir>/scratch)");
  app.add_option("--keep-failed-scratch-seconds", o.keep_failed_scratch_seconds,
                 "A failed job's scratch directories stay this long (0: removed at once)")
      ->check(CLI::Range(int64_t{0}, int64_t{365} * 24 * 3600))
      ->capture_default_str();
  app.add_option("--live-log-bytes-per-second", o.live_log_bytes_per_second,
                 "Output of each job streamed live to podsched, at most (4 s of it saved up; 0: "
                 "no limit). Beyond it the live log skips, marked; the stored log is whole")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--checkpoint-root", o.checkpoint_roots,
                 "Directory whose subdirectories (one per user) a Launch may have this agent "
                 "create for file:// checkpoints, e.g. /srv/objects/checkpoints/users; others are "
                 "refused. Repeat it for each store the agent serves (a store per zone). "
                 "Default: any absolute path");
  app.add_option("--log-root", o.log_root,
                 "URL prefix a Launch's log_url must start with, e.g. file:///srv/objects; "
                 "others are refused. Default: any");
  app.add_option("--max-job-processes", o.max_job_processes,
                 "A job with more processes than this on this machine is killed and fails "
                 "(threads do not count)")
      ->check(CLI::Range(8, 1000000))
      ->capture_default_str();
  app.add_option("--exit-log-deadline-seconds", o.exit_log_deadline_seconds,
                 "A job's exit is reported at most this long after its processes ended, even "
                 "while its log is still being stored (a slow object store never holds hosts)")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  bool insecure_bus = false;
  app.add_flag("--insecure-bus", insecure_bus,
               "As root, run the bus as plain TCP without --bus-key-file (refused otherwise: "
               "whoever answers on the bus port could start jobs as any account here). Only "
               "where no untrusted user can reach or bind the bus port");
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  auto usage = [](const std::string& message) {
    std::fprintf(stderr, "podworker: %s\n(run podworker --help)\n", message.c_str());
    return 2;
  };
  // An enrolled key file says who this agent is and where (and whom) it connects to; the
  // command line may repeat it, never contradict it.
  podsched::KeyFile keys;
  if (!key_file.empty()) {
    std::string error;
    if (!ReadKeyFile(key_file, keys, error)) return usage(error);
    if (!keys.agent_id.empty()) {
      if (!o.agent_id.empty() && o.agent_id != keys.agent_id) {
        return usage("--agent-id " + o.agent_id + " but " + key_file + " is enrolled for " +
                     keys.agent_id + " (podsched refuses a key under another id)");
      }
      o.agent_id = keys.agent_id;
    }
    if (!keys.bus.empty() && app.count("--bus") == 0) {
      if (keys.bus.find('*') != std::string::npos) {
        return usage(key_file + " names the bus " + keys.bus + " (an ephemeral port): give --bus");
      }
      o.bus = keys.bus;
    }
    if (o.bus_server_key.empty()) o.bus_server_key = keys.server_key;
    if (!keys.server_key.empty() && o.bus_server_key != keys.server_key) {
      return usage("--bus-server-key differs from the server-key pinned in " + key_file);
    }
    if (o.bus_server_key.empty()) {
      return usage(key_file + " has no server-key line: give --bus-server-key (or enrol with "
                   "podsched agent enroll)");
    }
    o.bus_public_key = keys.public_key;
    o.bus_secret_key = keys.secret_key;
  } else if (!o.bus_server_key.empty()) {
    return usage("--bus-server-key needs --bus-key-file (this agent's key pair)");
  } else if (geteuid() == 0 && !insecure_bus) {
    // The audit's M7: a root agent on plain TCP obeys whoever answers on the bus port (a local
    // user binding it while podsched restarts), and runs their Launch as any account.
    return usage(
        "running as root without --bus-key-file: the bus would be plain TCP, and whoever "
        "answers on " + o.bus + " could start jobs here as any account. Enrol this agent "
        "(podsched agent enroll --agent-id ID --hosts H --out FILE) and give --bus-key-file "
        "FILE, or --insecure-bus where no untrusted user can reach the bus port");
  }
  for (const std::string& root : o.checkpoint_roots) {
    if (!podsched::agent::PathIsWithin(root, "/")) {
      return usage("--checkpoint-root " + root + ": an absolute path in normal form");
    }
  }
  auto parsed = podsched::ParseHostRanges(hosts);
  if (!parsed) return usage(parsed.error().message());
  o.hosts = *parsed;
  if (o.agent_id.empty()) {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    o.agent_id = std::string(name) + "-" + std::to_string(o.hosts.front());
  }
  if (!podsched::IsValidAgentId(o.agent_id)) return usage("--agent-id '" + o.agent_id + "' must be 1..64 of [A-Za-z0-9._-]");
  if (o.state_dir.empty()) o.state_dir = "var/worker/" + o.agent_id;
  if (o.advertise.empty()) {
    std::string error;
    o.advertise = AddressTowards(o.bus, error);
    if (o.advertise.empty()) return usage(error);
  }
  o.state_dir = std::filesystem::absolute(o.state_dir).string();
  if (o.mpi_subnet.empty()) {
    auto subnet = DefaultMpiSubnet(o.advertise);
    if (!subnet) return usage(subnet.error().message());
    o.mpi_subnet = *subnet;
  }
  if (!o.bus_server_key.empty() && !podsched::IsZ85Key(o.bus_server_key)) {
    return usage("--bus-server-key must be 40 Z85 characters");
  }
  o.accounts.min_uid = min_uid;
  std::erase(denied_groups, "");
  o.accounts.denied_groups = podsched::agent::GroupIds(denied_groups);
  for (const auto& name : o.pass_env) {
    if (!podsched::IsEnvName(name)) return usage("--pass-env '" + name + "' is not a variable name");
  }
  if (podsched::Status s = CheckAgentPolicy(o.accounts, geteuid()); !s.ok()) {
    return usage(s.message());
  }
  if (!o.scratch_dir.empty()) o.scratch_dir = std::filesystem::absolute(o.scratch_dir).string();
  o.podworker_path = HelperPath(SelfPath(argv[0]));
  o.rank_path = RankBinaryPath(SelfPath(argv[0]));
  o.version = "0.1.0";
  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::flush_on(spdlog::level::trace);  // the log is often a file read by people and tests
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ podworker[%P] %v");
  if (o.accounts.jobs_as_agent_user) {
    spdlog::warn("every job runs as uid {}, the account podworker runs as (--jobs-as-agent-user)",
                 geteuid());
  } else if (geteuid() == 0) {
    spdlog::info("jobs run as their users' Unix accounts (uid >= {}{})", o.accounts.min_uid,
                 o.accounts.allow_root ? ", or root" : "");
  } else {
    spdlog::info("podworker runs without root (uid {}): it runs only that account's jobs",
                 geteuid());
  }
  ProtectFromOomKiller();
  const int rc = RunAgent(o);
  // An upload the stop left running (a hung object store) still runs on its detached thread:
  // end the process without the static destructors (OpenSSL's and libcurl's cleanup among
  // them), which must not run under it.
  if (podsched::agent::OutputSpool::AbandonedUploads() > 0) {
    spdlog::shutdown();
    std::_Exit(rc);
  }
  return rc;
}
