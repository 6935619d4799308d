// One job (one epoch) this agent takes part in, from its Launch to its Exited: what the agent
// knows of it, and the verdicts that follow from that alone: whether everything of it has ended
// here, its exit report, whether its scratch is kept, and what the heartbeat and the rsh server
// see of it. Signals, scans, the spool and the bus are JobRunner's.
//
// Who may call it: JobRunner, which owns every RunningJob (one per job id); one thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "proto/bus.pb.h"
#include "worker/agent/job_account.h"
#include "worker/agent/job_lifecycle.h"
#include "worker/agent/launch_book.h"
#include "worker/agent/launcher_output.h"
#include "worker/agent/rsh_admission.h"

namespace podsched::agent {

struct RunningJob {
  // The Launch as this agent takes it: its hosts among `agent_hosts` (its pod's ids, sorted;
  // the Launch's are fleet ids, first_host apart), and whether it starts the launcher (it has
  // the job's first host).
  RunningJob(const bus::Launch& launch, const std::vector<int32_t>& agent_hosts,
             MonotonicTime now, int64_t live_log_bytes_per_second);

  // Nothing of it is left here: no process, no open session or pipe, the launcher reaped; a
  // remote-only host waits until every host had its sessions or the start timeout is over.
  bool Quiet(bool sessions_open, MonotonicTime now, Duration start_timeout) const;
  // The report of its end here, once Quiet: the launcher's verdict from its wait status and the
  // lifecycle (ClassifyExit); a remote-only host's is a release.
  ExitReport Exit() const;
  // Failed here, not stopped by the scheduler (preempt, kill): its scratch is kept a while.
  bool FailedHere() const;
  // What the rsh server admits sessions by. A job whose processes are gone takes no new one.
  RshJob Rsh() const;
  // Its entry in Register and Heartbeat.
  void FillRunning(bus::RunningJob& running) const;
  // Over `max_processes` processes here for the first time: killed_for says so, true (the
  // agent then kills it on its own).
  bool OverProcessLimit(int64_t max_processes);
  // TMPDIR / POD_SCRATCH_DIR of `host`; empty when it has none.
  std::string ScratchOf(int32_t host) const;

  bus::Launch launch;
  JobEpoch je;
  // This agent's hosts of the job, by the Launch's (fleet) ids, sorted. Every host id inside the
  // agent is such an id (rsh requests and tokens, tags, directories); podsched and POD_HOST get
  // the pod's own (PodHost).
  std::vector<int32_t> my_hosts;
  int32_t PodHost(int32_t host) const { return host - launch.first_host(); }
  bool launcher = false;
  std::string progress_key;  // the launcher's POD_PROGRESS_KEY (hex, drawn at launch)
  JobLifecycle life;
  pid_t mpirun = -1;
  bool mpirun_reaped = false;
  int mpirun_status = 0;
  LauncherOutput output;  // its pipes, the stored and the live log
  std::map<int32_t, int> sessions_started;  // by host: the rsh token's use count
  std::vector<pid_t> pids;                   // live processes of the job (last scan)
  std::set<int32_t> ranks_up_hosts;  // hosts whose ranks_per_host ranks were all seen alive
  int64_t last_checkpoint_step = 0;
  bool rank_reported_preempted = false;  // a kRankPreemptedLine in the launcher's output
  std::optional<ExitReport> ended;  // processes gone: the Exited waits for the spool
  MonotonicTime storing_since{};    // when the spool was asked to store the log
  std::optional<bus::Launch> next;  // newer epoch waiting for this one to be gone
  Result<JobAccount> account = JobAccount{};  // resolved at Start
  std::map<int32_t, std::string> scratch;      // host -> scratch directory
  bool failed_here = false;  // a command of an rsh session here failed (keeps scratch)
  // Why the agent killed it on its own (over --max-job-processes); "" when it did not.
  std::string killed_for;
};

}  // namespace podsched::agent
