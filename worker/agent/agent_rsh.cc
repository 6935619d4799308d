#include "worker/agent/agent_internal.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "worker/agent/child.h"

namespace podsched::agent::internal {

// ---- rsh server ----

void Agent::OnAccept() {
  while (true) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto s = std::make_unique<Session>();
    s->fd = fd;
    sessions_[fd] = std::move(s);
  }
}

void Agent::QueueFrame(Session& s, const bus::RshFrame& f) {
  s.sendbuf += EncodeFrame(f.SerializeAsString());
}

void Agent::RefuseSession(Session& s, const std::string& why) {
  spdlog::warn("rsh request refused: {}", why);
  bus::RshFrame f;
  f.set_error(why);
  QueueFrame(s, f);
  f.set_exit_status(255);
  QueueFrame(s, f);
  s.finishing = true;
  OnSessionWritable(s);
}

void Agent::OnSessionReadable(Session& s) {
  char buf[65536];
  const ssize_t n = read(s.fd, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    // The client is gone: the remote command must not outlive it.
    if (s.pid > 0 && !s.reaped) {
      spdlog::info("rsh client of job {} host {} disconnected: killing its processes",
                   s.je.job.value(), s.host);
      kill(-s.pid, SIGKILL);
      Scan();
      for (auto& [pid, info] : procs_) {
        auto tag = tag_cache_.find(pid);
        if (tag != tag_cache_.end() && tag->second.second == TagValue(s.je, s.host)) {
          kill(pid, SIGKILL);
        }
      }
    }
    CloseSession(s);
    return;
  }
  if (s.started || s.finishing || s.parked) return;  // nothing more is expected from the client
  s.reader.Append(std::string_view(buf, static_cast<size_t>(n)));
  std::string payload;
  auto next = s.reader.Next(payload);
  if (!next) return RefuseSession(s, next.error().message());
  if (!*next) return;
  bus::RshRequest req;
  if (!req.ParseFromString(payload)) return RefuseSession(s, "malformed rsh request");
  StartSession(s, req);
}

void Agent::StartSession(Session& s, const bus::RshRequest& req) {
  const JobEpoch je{JobId(req.job().job_id()), req.job().epoch()};
  const std::string what = "job " + std::to_string(je.job.value()) + " epoch " +
                           std::to_string(je.epoch) + " host " + std::to_string(req.host());
  if (!std::binary_search(o_.hosts.begin(), o_.hosts.end(), req.host())) {
    return RefuseSession(s, what + ": host " + std::to_string(req.host()) +
                                " is not served by agent " + o_.agent_id);
  }
  Job* job = FindJob(je);
  if (job == nullptr && je.epoch > book_.HighestEpoch(je.job)) {
    const auto now = Steady::now();
    if (!s.parked) {
      const auto parked = std::count_if(sessions_.begin(), sessions_.end(),
                                        [](const auto& e) { return e.second->parked.has_value(); });
      if (static_cast<size_t>(parked) >= kMaxParkedSessions) {
        return RefuseSession(s, what + ": too many requests waiting for their Launch");
      }
      s.parked = req;
      s.parked_until = now + kRshLaunchWait;
      spdlog::info("rsh {}: waiting for its Launch", what);
      return;
    }
    if (now < s.parked_until) return;
    return RefuseSession(s, what + ": no Launch of that job and epoch arrived within " +
                                std::to_string(kRshLaunchWait.count() / 1000) + " s");
  }
  s.parked.reset();
  if (job == nullptr || job->kill || job->grace_expired) {
    return RefuseSession(s, what + ": no running launch of that job and epoch here");
  }
  const std::string& token = job->launch.rsh_token();
  bool same = token.size() == req.token().size();
  unsigned char diff = 0;
  for (size_t i = 0; same && i < token.size(); ++i) diff |= token[i] ^ req.token()[i];
  if (!same || diff != 0) return RefuseSession(s, what + ": bad rsh token");
  if (std::find(job->my_hosts.begin(), job->my_hosts.end(), req.host()) == job->my_hosts.end()) {
    return RefuseSession(s, what + ": host not in the job's slice");
  }
  if (req.argv().empty()) return RefuseSession(s, what + ": empty command");

  // Each simulated host gets its own OpenMPI session directory: orteds of one job on one
  // machine otherwise share the files under /tmp/ompi.HOSTNAME.UID (hwloc topology, PMIx
  // store) and crash now and then (docs/podworker.md).
  const std::string tmp = state_.path() + "/ompi-tmp/h" + std::to_string(req.host());
  std::error_code ec;
  std::filesystem::create_directories(tmp, ec);
  const std::vector<std::string> argv(req.argv().begin(), req.argv().end());
  auto child = SpawnChild({"/bin/sh", "-c", JoinForShell(argv)},
                          EnvironmentWith({"POD_HOST=" + std::to_string(req.host()),
                                           "OMPI_MCA_orte_tmpdir_base=" + tmp,
                                           std::string(kTagVariable) + "=" +
                                               TagValue(je, req.host())}));
  if (!child) return RefuseSession(s, what + ": " + child.error().message());
  s.started = true;
  s.je = je;
  s.host = req.host();
  s.pid = child->pid;
  s.out = child->stdout_fd;
  s.err = child->stderr_fd;
  job->session_hosts.insert(req.host());
  spdlog::info("rsh {}: started pid {}", what, s.pid);
  next_scan_ = Steady::now();
}

void Agent::RetryParkedSessions() {
  std::vector<int> fds;
  for (const auto& [fd, s] : sessions_) {
    if (s->parked) fds.push_back(fd);
  }
  for (int fd : fds) {
    auto it = sessions_.find(fd);
    if (it == sessions_.end()) continue;
    const bus::RshRequest req = *it->second->parked;
    StartSession(*it->second, req);
  }
}

void Agent::ReadSessionPipe(Session& s, int& fd, bool is_stderr) {
  char buf[65536];
  const ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    CloseFd(fd);
    MaybeFinishSession(s);
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

void Agent::MaybeFinishSession(Session& s) {
  if (!s.started || s.finishing || !s.reaped || s.out >= 0 || s.err >= 0) return;
  bus::RshFrame f;
  f.set_exit_status(SshExitStatus(s.status));
  QueueFrame(s, f);
  s.finishing = true;
  OnSessionWritable(s);
}

void Agent::OnSessionWritable(Session& s) {
  while (!s.sendbuf.empty()) {
    const ssize_t n = send(s.fd, s.sendbuf.data(), s.sendbuf.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
      if (s.pid > 0 && !s.reaped) kill(-s.pid, SIGKILL);
      CloseSession(s);
      return;
    }
    s.sendbuf.erase(0, static_cast<size_t>(n));
  }
  if (s.finishing) CloseSession(s);
}

void Agent::CloseSession(Session& s) {
  if (s.pid > 0 && !s.reaped) {
    // Closed while the command runs (client gone, write error): it dies, and is reaped later.
    kill(-s.pid, SIGKILL);
  }
  CloseFd(s.out);
  CloseFd(s.err);
  const int fd = s.fd;
  close(fd);
  sessions_.erase(fd);  // destroys s
  next_scan_ = Steady::now();
}


}  // namespace podsched::agent::internal
