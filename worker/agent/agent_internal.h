// Private to podworker's agent: the state of the loop, shared by agent.cc (setup, loop, bus,
// child reaping), agent_jobs.cc (jobs, process scans, output, progress) and agent_rsh.cc (the
// rsh server). Behaviour: docs/bus.md; design: docs/podworker.md.
//
// Thread safety: everything here belongs to the agent's one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "proto/bus.pb.h"
#include "worker/agent/agent.h"
#include "worker/agent/bus_validate.h"
#include "worker/agent/launch_book.h"
#include "worker/agent/process_tree.h"
#include "worker/agent/rsh_wire.h"
#include "worker/agent/state_dir.h"

namespace podsched::agent::internal {

using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline constexpr size_t kMaxLogMessage = 64 * 1024;
inline constexpr size_t kLogTail = 1 << 20;
inline constexpr int64_t kMaxSpool = int64_t{256} << 20;  // stored output per job and epoch
inline constexpr size_t kRshBackpressure = 4 << 20;
inline constexpr auto kScanInterval = milliseconds(200);
inline constexpr auto kRegisterRetry = milliseconds(2000);
inline constexpr auto kRshLaunchWait = milliseconds(10000);
inline constexpr size_t kMaxParkedSessions = 256;

// One output stream of a child, cut into whole lines.
struct LinePipe {
  int fd = -1;
  std::string partial;
};

struct Job {
  bus::Launch launch;
  JobEpoch je;
  std::vector<int32_t> my_hosts;  // this agent's hosts of the slice
  bool launcher = false;
  Steady::time_point launched_at;

  pid_t mpirun = -1;
  bool mpirun_reaped = false;
  int mpirun_status = 0;
  LinePipe out, err;

  std::set<int32_t> session_hosts;  // hosts an rsh session was accepted for
  bool preempt = false, kill = false, grace_expired = false;
  int32_t grace_seconds = 0;
  Steady::time_point grace_deadline;
  int grace_extensions = 0;

  std::vector<pid_t> pids;  // live processes of the job (last scan)
  std::set<pid_t> termed;   // ranks already sent SIGTERM

  int spool_fd = -1;  // the whole output (uploaded at exit)
  std::string spool_path;
  std::string tail;         // last kLogTail bytes
  std::string pending_log;  // whole lines not yet sent as Log
  int64_t log_offset = 0;
  int64_t last_checkpoint_step = 0;

  std::optional<bus::Launch> next;  // newer epoch waiting for this one to be gone
};

struct Session {
  int fd = -1;
  FrameReader reader;
  std::string sendbuf;
  bool started = false;
  bool finishing = false;  // exit frame queued: close when sendbuf is flushed
  JobEpoch je;
  int32_t host = -1;
  pid_t pid = -1;
  bool reaped = false;
  int status = 0;
  int out = -1, err = -1;
  // A request that came before its Launch (the agents get the Launch at the same time as
  // mpirun's host, but not necessarily sooner): retried until parked_until.
  std::optional<bus::RshRequest> parked;
  Steady::time_point parked_until;
};

// PODWORKER_TAG value of the processes of (job, epoch) on host; ParseTag is its inverse.
std::string TagValue(const JobEpoch& je, int32_t host);
bool ParseTag(const std::string& tag, int64_t& job, int64_t& epoch, int32_t& host);
void ToProto(const ExitReport& r, bus::Exited& e);
void CloseFd(int& fd);

class Agent {
 public:
  explicit Agent(const AgentOptions& o) : o_(o), state_(o.state_dir) {}
  int Run();

 private:
  // Setup.
  Status OpenSockets();
  Status OpenDealer();
  // Bus.
  // false when the message could not be queued (not connected, queue full): it is dropped.
  bool Send(const bus::Envelope& env);
  void SendRegister();
  void SendHeartbeat();
  void FillRunning(google::protobuf::RepeatedPtrField<bus::RunningJob>* running);
  void OnBusReadable();
  void OnEnvelope(const bus::Envelope& env);
  void Drop(const Rejection& r);
  // Jobs.
  void OnLaunch(const bus::Launch& l);
  void StartJob(const bus::Launch& l);
  void OnPreempt(const bus::Preempt& p);
  void OnKill(const bus::Kill& k);
  void KillJob(Job& job);
  void SignalRanks(Job& job);
  void Scan();
  void CheckJobs();
  void FinishJob(Job& job);
  void ReadJobPipe(Job& job, LinePipe& pipe);
  void FlushLog(Job& job, bool final);
  void UploadLog(Job& job);
  // Progress.
  void OnProgressDatagram();
  // rsh server.
  void OnAccept();
  void OnSessionReadable(Session& s);
  void OnSessionWritable(Session& s);
  void StartSession(Session& s, const bus::RshRequest& req);
  void RetryParkedSessions();
  void RefuseSession(Session& s, const std::string& why);
  void QueueFrame(Session& s, const bus::RshFrame& f);
  void ReadSessionPipe(Session& s, int& fd, bool is_stderr);
  void MaybeFinishSession(Session& s);
  void CloseSession(Session& s);
  // Processes.
  void OnSignal();
  void Reap();

  Job* FindJob(const JobEpoch& je) {
    auto it = jobs_.find(je.job);
    return it != jobs_.end() && it->second.je == je ? &it->second : nullptr;
  }

  AgentOptions o_;
  StateDir state_;
  zmq::context_t ctx_;
  std::unique_ptr<zmq::socket_t> dealer_;
  int signal_fd_ = -1, udp_fd_ = -1, listen_fd_ = -1;
  std::string rsh_endpoint_, progress_endpoint_;
  LaunchBook book_;
  std::map<JobId, Job> jobs_;
  std::map<int, std::unique_ptr<Session>> sessions_;  // by socket fd
  std::map<std::string, int64_t> dropped_;
  bool welcomed_ = false, stop_ = false;
  std::optional<Steady::time_point> send_failing_since_;
  bool bus_down_logged_ = false;
  milliseconds heartbeat_interval_{1000};
  Steady::time_point next_heartbeat_, next_register_, next_scan_;
  std::map<pid_t, std::pair<uint64_t, std::string>> tag_cache_;  // pid -> (start, tag)
  std::map<pid_t, ProcInfo> procs_;                               // last scan
};

}  // namespace podsched::agent::internal
