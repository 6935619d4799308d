// The agent's end of the rsh side channel (docs/bus.md, "podworker rsh"): accepts
// `podworker rsh` connections, admits each request (rsh_admission.h; one that came before its
// Launch waits for it), runs the command under /bin/sh -c for its simulated host, relays its
// output and exit status, and kills it when the client goes.
//
// Thread safety: the agent's poll thread only.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "proto/bus.pb.h"
#include "worker/agent/agent_options.h"
#include "worker/agent/job_runner.h"
#include "worker/agent/poll_set.h"
#include "worker/agent/rsh_wire.h"
#include "worker/agent/state_dir.h"

namespace podsched::agent {

class RshServer final : public JobSessions {
 public:
  RshServer(const AgentOptions& options, const MonotonicClock& clock, const StateDir& state,
            JobRunner& jobs);
  ~RshServer() override;
  RshServer(const RshServer&) = delete;
  RshServer& operator=(const RshServer&) = delete;

  // Listens on options.advertise:options.rsh_port (0: any free port).
  Status Listen();
  // "tcp://IP:PORT", for Register.
  const std::string& endpoint() const { return endpoint_; }

  // The listener, the connections and the commands' output pipes.
  void AddPollItems(PollSet& poll);
  // A loop iteration: requests waiting for their Launch are asked about again.
  void Tick();
  // A reaped child: a command's exit status goes to its client.
  void OnReaped(pid_t pid, int status);
  // The agent stops: SIGKILL to every running command.
  void KillEverything();

  // JobSessions.
  bool AnyOpen(const JobEpoch& je) const override;
  void KillAll(const JobEpoch& je) override;

 private:
  // One connection: a request, then the command's output and exit status.
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
    std::optional<bus::RshRequest> parked;  // came before its Launch: asked again each Tick
    MonotonicTime parked_until{};
    std::string challenge;  // sent first; the request must prove the host token against it
    MonotonicTime accepted_at{};  // a request not complete by accepted_at + kRshRequestTimeout
  };
  // Connected, no complete request yet.
  static bool Pending(const Session& s) { return !s.started && !s.finishing && !s.parked; }

  void OnAccept();
  int64_t refused_connections_ = 0;  // closed at accept (too many pending) or timed out
  int64_t refused_requests_ = 0;     // requests refused (bad token, used up, unknown job...)
  void OnReadable(Session& s);
  void OnWritable(Session& s);
  void Admit(Session& s, const bus::RshRequest& req);
  // `first_host`: the Launch's (RshJob::first_host), which the admission looked up.
  void Run(Session& s, const bus::RshRequest& req, int32_t first_host);
  void Refuse(Session& s, const std::string& why);
  void QueueFrame(Session& s, const bus::RshFrame& f);
  void ReadPipe(Session& s, int& fd, bool is_stderr);
  void MaybeFinish(Session& s);
  void Close(Session& s);

  const AgentOptions& o_;
  const MonotonicClock& clock_;
  const StateDir& state_;
  JobRunner& jobs_;
  int listen_fd_ = -1;
  std::string endpoint_;
  std::map<int, std::unique_ptr<Session>> sessions_;  // by socket fd
};

}  // namespace podsched::agent
