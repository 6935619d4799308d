#include "worker/agent/rsh_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "common/hash.h"
#include "worker/agent/bus_validate.h"
#include "worker/agent/child.h"
#include "worker/agent/mpi_runtime_env.h"
#include "worker/agent/process_tree.h"
#include "worker/progress/progress_wire.h"
#include "worker/agent/rsh_admission.h"

namespace podsched::agent {
namespace {

constexpr size_t kBackpressure = 4 << 20;  // unsent output above which pipes are not read

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

RshServer::RshServer(const AgentOptions& options, const MonotonicClock& clock,
                     const StateDir& state, JobRunner& jobs)
    : o_(options), clock_(clock), state_(state), jobs_(jobs) {}

RshServer::~RshServer() {
  for (auto& [fd, s] : sessions_) {
    CloseFd(s->out);
    CloseFd(s->err);
    close(fd);
  }
  CloseFd(listen_fd_);
}

Status RshServer::Listen() {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, o_.advertise.c_str(), &addr.sin_addr) != 1) {
    return Status(StatusCode::kInvalidArgument,
                  "--advertise '" + o_.advertise + "' is not an IPv4 address");
  }
  addr.sin_port = htons(static_cast<uint16_t>(o_.rsh_port));
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 128) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Status(StatusCode::kUnavailable, std::string("rsh listener: ") + strerror(errno));
  }
  endpoint_ = FormatTcpEndpoint({o_.advertise, ntohs(addr.sin_port)});
  return Status::Ok();
}

void RshServer::AddPollItems(PollSet& poll) {
  poll.AddFd(listen_fd_, ZMQ_POLLIN, [this](short) { OnAccept(); });
  for (auto& [fd, sp] : sessions_) {
    Session* s = sp.get();
    short ev = ZMQ_POLLIN;
    if (!s->sendbuf.empty()) ev |= ZMQ_POLLOUT;
    poll.AddFd(fd, ev, [this, fd](short revents) {
      auto it = sessions_.find(fd);
      if (it == sessions_.end()) return;
      if (revents & ZMQ_POLLOUT) OnWritable(*it->second);
      it = sessions_.find(fd);
      if (it != sessions_.end() && (revents & (ZMQ_POLLIN | ZMQ_POLLERR))) {
        OnReadable(*it->second);
      }
    });
    if (s->sendbuf.size() >= kBackpressure) continue;
    for (bool is_stderr : {false, true}) {
      if ((is_stderr ? s->err : s->out) < 0) continue;
      poll.AddFd(is_stderr ? s->err : s->out, ZMQ_POLLIN, [this, fd, is_stderr](short) {
        auto it = sessions_.find(fd);
        if (it == sessions_.end()) return;
        Session& s = *it->second;
        ReadPipe(s, is_stderr ? s.err : s.out, is_stderr);
      });
    }
  }
}

void RshServer::OnAccept() {
  // At most kMaxAcceptsPerTurn per turn of the agent's poll loop (audit M2): the rest wait in the
  // listen backlog for the next turn, after the bus and the heartbeats had theirs.
  for (int accepted = 0; accepted < kMaxAcceptsPerTurn; ++accepted) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    // Too many connections without a request: the oldest goes (a client that sends its request
    // at once, as `podworker rsh` does, always gets through a flood of idle connections).
    Session* oldest = nullptr;
    size_t pending = 0;
    for (auto& [other_fd, other] : sessions_) {
      if (!Pending(*other)) continue;
      ++pending;
      if (oldest == nullptr || other->accepted_at < oldest->accepted_at) oldest = other.get();
    }
    if (pending >= kMaxPendingRshConnections && oldest != nullptr) {
      if (++refused_connections_ % 100 == 1) {
        spdlog::warn("rsh: {} connections without a request; closing the oldest ({} so far)",
                     pending, refused_connections_);
      }
      Close(*oldest);
    }
    auto s = std::make_unique<Session>();
    s->fd = fd;
    s->accepted_at = clock_.Now();
    s->challenge = RandomBytes(32);
    bus::RshFrame challenge;
    challenge.set_challenge(s->challenge);
    Session& added = *s;
    sessions_[fd] = std::move(s);
    QueueFrame(added, challenge);
    OnWritable(added);
  }
}

void RshServer::QueueFrame(Session& s, const bus::RshFrame& f) {
  s.sendbuf += EncodeFrame(f.SerializeAsString());
}

void RshServer::Refuse(Session& s, const std::string& why) {
  spdlog::warn("rsh request refused ({} so far): {}", ++refused_requests_, why);
  bus::RshFrame f;
  f.set_error(why);
  QueueFrame(s, f);
  f.set_exit_status(255);
  QueueFrame(s, f);
  s.finishing = true;
  OnWritable(s);
}

void RshServer::OnReadable(Session& s) {
  char buf[65536];
  const ssize_t n = read(s.fd, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    // The client is gone: the remote command must not outlive it.
    if (s.pid > 0 && !s.reaped) {
      spdlog::info("rsh client of job {} host {} disconnected: killing its processes",
                   s.je.job.value(), s.host);
      kill(-s.pid, SIGKILL);
      jobs_.KillHostProcesses(s.je, s.host);
    }
    Close(s);
    return;
  }
  if (s.started || s.finishing || s.parked) return;  // nothing more is expected from the client
  s.reader.Append(std::string_view(buf, static_cast<size_t>(n)));
  std::string payload;
  auto next = s.reader.Next(payload);
  if (!next) return Refuse(s, next.error().message());
  if (!*next) return;
  bus::RshRequest req;
  if (!req.ParseFromString(payload)) return Refuse(s, "malformed rsh request");
  Admit(s, req);
}

void RshServer::Admit(Session& s, const bus::RshRequest& req) {
  const JobEpoch je{JobId(req.job().job_id()), req.job().epoch()};
  RshContext ctx;
  ctx.agent_hosts = o_.hosts;
  ctx.agent_id = o_.agent_id;
  ctx.job = jobs_.RshJobOf(je);
  ctx.highest_epoch = jobs_.HighestEpoch(je.job);
  ctx.challenge = s.challenge;
  ctx.parked = static_cast<size_t>(std::count_if(
      sessions_.begin(), sessions_.end(), [](const auto& e) { return e.second->parked.has_value(); }));
  const std::optional<MonotonicTime> parked_until =
      s.parked ? std::optional(s.parked_until) : std::nullopt;
  const RshDecision d = AdmitRshRequest(req, ctx, parked_until, clock_.Now());
  switch (d.kind) {
    case RshDecision::kPark:
      s.parked = req;
      s.parked_until = d.park_until;
      spdlog::info("rsh {}: waiting for its Launch", DescribeRshRequest(req));
      return;
    case RshDecision::kWait: return;
    case RshDecision::kRefuse:
      s.parked.reset();
      return Refuse(s, d.reason);
    case RshDecision::kRun:
      s.parked.reset();
      return Run(s, req, ctx.job->first_host);
  }
}

void RshServer::Run(Session& s, const bus::RshRequest& req, int32_t first_host) {
  const JobEpoch je{JobId(req.job().job_id()), req.job().epoch()};
  // Each simulated host gets its own OpenMPI session directory: orteds of one job on one
  // machine otherwise share the files under /tmp/ompi.HOSTNAME.UID (hwloc topology, PMIx
  // store) and crash now and then (docs/podworker.md).
  // It lies in the host's directory of the epoch, which is the job account's.
  const std::string tmp = state_.HostDir(je, req.host()) + "/ompi";
  auto account = jobs_.AccountOf(je);
  if (!account) return Refuse(s, DescribeRshRequest(req) + ": " + account.error().message());
  const std::vector<std::string> argv(req.argv().begin(), req.argv().end());
  // The request's variables (`podworker launch` sends the job's), then what only this agent
  // knows; names it reserves are never taken from a request.
  std::vector<std::string> env;
  for (const auto& [name, value] : req.env()) {
    // The progress endpoint and key go along: rank 0 may run on this host and report.
    if (!IsReservedEnvName(name) || name == "POD_PROGRESS_ENDPOINT" ||
        name == progress::kProgressKeyVariable) {
      env.push_back(name + "=" + value);
    }
  }
  // POD_HOST is the pod's own id; the request names the Launch's fleet id.
  env.push_back("POD_HOST=" + std::to_string(req.host() - first_host));
  env.push_back("POD_PREEMPT_FILE=" + state_.PreemptFile(je, req.host()));
  env.push_back("OMPI_MCA_orte_tmpdir_base=" + tmp);
  if (req.env().count(kHwlocComponentsVariable) == 0) {  // why: mpi_runtime_env.h
    env.push_back(std::string(kHwlocComponentsVariable) + "=" + kHwlocComponentsDefault);
  }
  env.push_back(std::string(kTagVariable) + "=" + TagValue(je, req.host()));
  if (const std::string scratch = jobs_.ScratchOf(je, req.host()); !scratch.empty()) {
    env.push_back("TMPDIR=" + scratch);
    env.push_back("POD_SCRATCH_DIR=" + scratch);
  }
  auto child = SpawnChild({"/bin/sh", "-c", JoinForShell(argv)},
                          jobs_.EnvironmentFor(*account, env), &*account, account->home);
  if (!child) return Refuse(s, DescribeRshRequest(req) + ": " + child.error().message());
  s.started = true;
  s.je = je;
  s.host = req.host();
  s.pid = child->pid;
  s.out = child->stdout_fd;
  s.err = child->stderr_fd;
  spdlog::info("rsh {}: started pid {}", DescribeRshRequest(req), s.pid);
  jobs_.SessionStarted(je, req.host());
}

void RshServer::Tick() {
  std::vector<int> fds, silent;
  const MonotonicTime now = clock_.Now();
  for (const auto& [fd, s] : sessions_) {
    if (s->parked) fds.push_back(fd);
    if (Pending(*s) && now - s->accepted_at > kRshRequestTimeout) silent.push_back(fd);
  }
  for (int fd : silent) {
    auto it = sessions_.find(fd);
    if (it == sessions_.end()) continue;
    ++refused_connections_;
    Refuse(*it->second, "no complete request within " +
                            std::to_string(ToSeconds(kRshRequestTimeout)).substr(0, 3) + " s");
  }
  for (int fd : fds) {
    auto it = sessions_.find(fd);
    if (it == sessions_.end()) continue;
    const bus::RshRequest req = *it->second->parked;
    Admit(*it->second, req);
  }
}

void RshServer::ReadPipe(Session& s, int& fd, bool is_stderr) {
  char buf[65536];
  const ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    CloseFd(fd);
    MaybeFinish(s);
    return;
  }
  bus::RshFrame f;
  if (is_stderr) {
    f.set_stderr_data(buf, static_cast<size_t>(n));
  } else {
    f.set_stdout_data(buf, static_cast<size_t>(n));
  }
  QueueFrame(s, f);
}

void RshServer::OnReaped(pid_t pid, int status) {
  for (auto& [fd, s] : sessions_) {
    if (s->pid == pid) {
      s->reaped = true;
      s->status = status;
      jobs_.SessionEnded(s->je, s->host, status);
      MaybeFinish(*s);
      return;
    }
  }
}

void RshServer::MaybeFinish(Session& s) {
  if (!s.started || s.finishing || !s.reaped || s.out >= 0 || s.err >= 0) return;
  bus::RshFrame f;
  f.set_exit_status(SshExitStatus(s.status));
  QueueFrame(s, f);
  s.finishing = true;
  OnWritable(s);
}

void RshServer::OnWritable(Session& s) {
  while (!s.sendbuf.empty()) {
    const ssize_t n = send(s.fd, s.sendbuf.data(), s.sendbuf.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
      Close(s);  // kills a command still running
      return;
    }
    s.sendbuf.erase(0, static_cast<size_t>(n));
  }
  if (s.finishing) Close(s);
}

void RshServer::Close(Session& s) {
  if (s.pid > 0 && !s.reaped) {
    // Closed while the command runs (client gone, write error): it dies, and is reaped later.
    kill(-s.pid, SIGKILL);
  }
  CloseFd(s.out);
  CloseFd(s.err);
  const int fd = s.fd;
  close(fd);
  sessions_.erase(fd);  // destroys s
  jobs_.ScanSoon();
}

bool RshServer::AnyOpen(const JobEpoch& je) const {
  return std::any_of(sessions_.begin(), sessions_.end(),
                     [&](const auto& s) { return s.second->je == je; });
}

void RshServer::KillAll(const JobEpoch& je) {
  for (auto& [fd, s] : sessions_) {
    if (s->je == je && s->pid > 0 && !s->reaped) kill(-s->pid, SIGKILL);
  }
}

void RshServer::KillEverything() {
  for (auto& [fd, s] : sessions_) {
    if (s->pid > 0 && !s->reaped) kill(-s->pid, SIGKILL);
  }
}

}  // namespace podsched::agent
