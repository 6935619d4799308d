// `launcher: exec` (docs/jobspec.md, "The launch contract"): the launcher host's agent runs
// `podworker-rank launch --rsh podworker-helper -- COMMAND...` where it would run mpirun. That
// process starts every rank of the slice as `podworker-helper rsh hHOST podworker-rank rank
// --rank R -- COMMAND...` (the same rsh side channel mpirun's orteds use, so each host's agent
// tags, watches, signals and releases the rank exactly as under mpirun), relays each rank's
// output as whole tagged lines, and exits with the job's verdict. (Where podworker-rank or
// podworker-helper is missing, the agent's own binary serves: it has all three subcommands.)
//
// This file holds the pure parts: the ranks to start, their argv, and how their exits combine.
// Thread safety: values owned by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace podsched::agent {

// The argv the agent runs as the launcher of an exec job: `rank_binary launch --rsh rsh_binary
// -- COMMAND...` (the launcher and each rank are `rank_binary`; `rsh_binary` reaches the hosts).
Result<std::vector<std::string>> ExecLauncherArgv(const std::string& rank_binary,
                                                  const std::string& rsh_binary,
                                                  const auto& command) {
  if (command.empty() || std::string(*command.begin()).empty()) {
    return InvalidArgument("empty command");
  }
  std::vector<std::string> argv{rank_binary, "launch", "--rsh", rsh_binary, "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// The arguments of `launch` (after the word "launch"): `[--rsh PATH] [--] COMMAND...`. Without
// --rsh the launcher's own binary is the rsh client (the agent's binary has every subcommand).
struct LaunchArgs {
  std::string rsh_binary;
  std::vector<std::string> command;
};
Result<LaunchArgs> ParseLaunchArgs(const std::vector<std::string>& args,
                                   const std::string& self);

// What the agent gives the exec launcher beside the job contract: the ranks' hosts as the Launch
// names them (fleet ids, rank order: POD_HOSTS has the pods' own ids, which two pods of a
// multislice job share) and the launcher's own host among them.
inline constexpr const char* kLaunchHostsVariable = "PODWORKER_HOSTS";
inline constexpr const char* kLaunchHostVariable = "PODWORKER_HOST";

struct RankStart {
  int32_t host = 0;
  int rank = 0;
};

// Rank r runs on hosts[r / ranks_per_host] (host-major, as mpirun places them).
std::vector<RankStart> PlanRanks(const std::vector<int32_t>& hosts, int ranks_per_host);

// `rank_binary rank --rank R -- COMMAND...`: a rank's own argv (run as it is, no shell).
std::vector<std::string> RankArgv(const std::string& rank_binary, const RankStart& start,
                                  const std::vector<std::string>& command);

// The ranks on the launcher's own host (PODWORKER_HOST, which the agent sets for the launcher) are
// started by the launcher itself, without the rsh hop: one process start and one TCP session
// less per rank, and a v2-8 device's job never touches the side channel. Their environment is
// the launcher's, which the agent made for that host (POD_HOST, POD_PREEMPT_FILE, PODWORKER_TAG,
// TMPDIR, OMPI_MCA_orte_tmpdir_base, as the host's rsh server sets them for a rank arriving by
// rsh), without the side channel's own variables (POD_RSH_*: the token stays with the launcher,
// as a rank started through rsh never sees it).
std::vector<std::string> LocalRankEnvironment(const std::vector<std::string>& launcher_env);

// The whole environment of rank `rank`'s program when the launcher starts it on its own host
// itself, not through `podworker rank` (one exec less per rank: a trivial job's host spent
// about as much CPU starting podworker-rank as running the program): `local_env` with the
// rank's part of the contract (RankEnv, rank_env.h) replacing or added, as `podworker rank
// --rank R` sets it before it becomes the program. Errors: the contract's sizes are missing or
// do not admit the rank.
Result<std::vector<std::string>> LocalRankProgramEnvironment(
    int rank, const std::vector<std::string>& local_env);

// `rsh_binary rsh hHOST` and RankArgv's words, each shell-quoted. The words after the host are
// shell-quoted: like ssh, the rsh server joins them with spaces for /bin/sh -c, so an argument
// with spaces, quotes or `$` arrives as the one word it was.
// `word` in single quotes for /bin/sh (a ' inside becomes '\'').
std::string ShellQuote(const std::string& word);

std::vector<std::string> RankRshArgv(const std::string& rsh_binary,
                                     const std::string& rank_binary, const RankStart& start,
                                     const std::vector<std::string>& command);

// The ranks' exit statuses (as `podworker rsh` returns them: 0..255, 128+N for signal N) and the
// launcher's own exit code. 75 is the "preempted, checkpoint committed" code (exit_verdict.h).
class RankExits {
 public:
  explicit RankExits(int ranks) : status_(static_cast<size_t>(ranks)) {}

  // True when the other ranks must be stopped now: this is the first failure (any status but 0
  // and 75; like mpirun, one failed rank ends the job).
  bool Exited(int rank, int status);
  bool all_exited() const { return exited_ == status_.size(); }
  // The first failure's status; else 75 when a rank exited 75; else 0.
  int ExitCode() const;
  // "rank 3 exited 1" for the first failure; "" without one.
  std::string FailureMessage() const;

 private:
  std::vector<std::optional<int>> status_;
  size_t exited_ = 0;
  std::optional<std::pair<int, int>> first_failure_;  // rank, status
  bool preempted_ = false;
};

}  // namespace podsched::agent
