// The jobs this agent takes part in, one epoch each, from the Launch to the Exited (docs/bus.md,
// "Launch" and "Preempt, Kill, exit"): starts the launcher (mpirun, or `podworker launch` for
// `launcher: exec`) on the launcher host, reports the hosts whose ranks are all up (RUNNING),
// writes POD_PREEMPT_FILE before the SIGTERM, finds each job's processes
// (its tagged descendants, scanned every 200 ms while jobs run), sends SIGTERM to the ranks on
// Preempt and SIGKILL on Kill and after the grace (JobLifecycle), streams the launcher's output
// as Log messages into the OutputSpool, and reports each exit with its verdict until acked. A
// launcher's Exited is sent once its output is stored (OutputSpool's callback: OnOutputStored).
//
// Thread safety: the agent's poll thread only.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/token_bucket.h"
#include "proto/bus.pb.h"
#include "worker/agent/agent_options.h"
#include "worker/agent/bus_validate.h"
#include "worker/agent/job_directories.h"
#include "worker/agent/job_lifecycle.h"
#include "worker/agent/launch_book.h"
#include "worker/agent/launcher_output.h"
#include "worker/agent/log_cutter.h"
#include "worker/agent/output_spool.h"
#include "worker/agent/poll_set.h"
#include "worker/agent/job_processes.h"
#include "worker/agent/rendezvous_ports.h"
#include "worker/agent/rsh_admission.h"
#include "worker/agent/running_job.h"
#include "worker/agent/state_dir.h"
#include "worker/progress/progress_wire.h"

namespace podsched::agent {

// The rsh sessions of a job, as JobRunner needs them (RshServer implements it).
class JobSessions {
 public:
  virtual ~JobSessions() = default;
  // A connection of the job is still open.
  virtual bool AnyOpen(const JobEpoch& je) const = 0;
  // SIGKILL to the process group of each of the job's running commands.
  virtual void KillAll(const JobEpoch& je) = 0;
};

class JobRunner {
 public:
  // Queues one message for the scheduler; false when it was dropped.
  using Send = std::function<bool(const bus::Envelope&)>;

  JobRunner(const AgentOptions& options, const MonotonicClock& clock, StateDir& state,
            OutputSpool& spool, Send send);
  void set_sessions(JobSessions* sessions) { sessions_ = sessions; }
  void set_progress_endpoint(std::string endpoint) { progress_endpoint_ = std::move(endpoint); }

  // Bus messages; a rejection is for the caller to drop and count.
  std::optional<Rejection> OnLaunch(const bus::Launch& launch);
  std::optional<Rejection> OnPreempt(const bus::Preempt& preempt);
  std::optional<Rejection> OnKill(const bus::Kill& kill);
  void OnAck(const std::vector<JobEpoch>& acked) { book_.Ack(acked); }
  // A progress datagram: forwarded as Progress with the launcher's epoch when it carries that
  // launch's POD_PROGRESS_KEY; a rejection otherwise (another job's, a stale epoch, no key).
  std::optional<Rejection> OnProgress(const progress::Progress& p);
  // A host's ranks came up since the last call: a heartbeat should go out now (RUNNING).
  bool TakeRanksUpNews() { return std::exchange(ranks_up_news_, false); }
  // OutputSpool's callback: the launcher's output is stored, its Exited goes out.
  void OnOutputStored(const JobEpoch& je);

  // The read ends of the launchers' output pipes.
  void AddPollItems(PollSet& poll);
  // A loop iteration: scans when due, ends jobs whose processes are gone.
  void Tick();
  // A reaped child: mpirun's status is the launcher's verdict.
  void OnReaped(pid_t pid, int status);
  // The next Tick scans (a process started or ended).
  void ScanSoon() { next_scan_ = clock_.Now(); }

  // Register and Heartbeat contents.
  void FillRunning(google::protobuf::RepeatedPtrField<bus::RunningJob>* running) const;
  const std::vector<ExitReport>& unacked() const { return book_.unacked(); }

  // For the rsh server: the running launch of (job, epoch), the highest epoch seen of a job, a
  // session started for one of the job's hosts, and the processes of (job, epoch, host) killed
  // when its rsh client is gone.
  std::optional<RshJob> RshJobOf(const JobEpoch& je) const;
  int64_t HighestEpoch(JobId job) const { return book_.HighestEpoch(job); }
  void SessionStarted(const JobEpoch& je, int32_t host);
  // A session's command ended with `status` (waitpid): a failure keeps the host's scratch.
  void SessionEnded(const JobEpoch& je, int32_t host, int status);
  // The account (job, epoch)'s processes run as, or why there is none on this machine.
  Result<JobAccount> AccountOf(const JobEpoch& je) const;
  // TMPDIR / POD_SCRATCH_DIR of (job, epoch) on `host`; empty when it has none.
  std::string ScratchOf(const JobEpoch& je, int32_t host) const;
  // The whole environment of a job process: JobEnvironment with the agent's pass list.
  std::vector<std::string> EnvironmentFor(const JobAccount& account,
                                          const std::vector<std::string>& overrides) const;
  void KillHostProcesses(const JobEpoch& je, int32_t host);

  // The agent is asked to stop: every job is preempted as by a Preempt (POD_PREEMPT_FILE,
  // SIGTERM to the ranks, SIGKILL after min(its grace, grace_cap)); their exits are reported as
  // usual. New Launches are refused from now on.
  void PreemptAll(int32_t grace_cap_seconds, std::string_view reason);
  // No job left (every exit reported).
  bool idle() const { return jobs_.empty(); }

  // The agent stops: SIGKILL to everything of every job; then (after the rsh server's own),
  // FinalScan SIGKILLs what appeared meanwhile and clears the state dir's record.
  void KillAll();
  void FinalScan();

 private:
  RunningJob* Find(const JobEpoch& je);
  const RunningJob* Find(const JobEpoch& je) const;
  void Start(const bus::Launch& launch);
  void StartLauncher(RunningJob& job);
  void PreemptJob(RunningJob& job, int32_t grace_seconds, std::string_view reason);
  void Forward(RunningJob& job, const progress::Progress& p);
  // The Launch's env, its rendezvous ports moved off any another process holds here.
  EnvMap WithFreeRendezvousPorts(RunningJob& job);
  bool FilterLine(const JobEpoch& je, std::string_view line);
  void KillJob(RunningJob& job);
  void KillLauncherAndSessions(RunningJob& job);
  void SignalRanks(RunningJob& job);
  void Scan();
  void NoteRanksUp(const std::map<std::pair<JobId, int32_t>, int>& ranks);
  void CheckJobs();
  void EndJob(RunningJob& job);
  void Report(RunningJob& job);
  void FlushOutput(RunningJob& job);
  void SweepScratch();
  void KillStrays(const RunningJob& job);

  const AgentOptions& o_;
  const MonotonicClock& clock_;
  StateDir& state_;
  OutputSpool& spool_;
  const Send send_;
  JobDirectories dirs_;  // host directories, scratch, checkpoint prefixes
  JobSessions* sessions_ = nullptr;
  std::string progress_endpoint_;
  LaunchBook book_;
  std::map<JobId, RunningJob> jobs_;
  JobProcesses processes_;
  MonotonicTime next_scan_{};
  bool ranks_up_news_ = false;
  bool stopping_ = false;  // PreemptAll was called: no new Launch
  MonotonicTime next_sweep_{};
  const std::vector<std::string> agent_env_;  // the agent's environment at start
};

}  // namespace podsched::agent
