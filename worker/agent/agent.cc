#include "worker/agent/agent.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>

#include "worker/agent/agent_internal.h"
#include "worker/agent/host_list.h"

namespace podsched::agent::internal {

std::string TagValue(const JobEpoch& je, int32_t host) {
  return std::to_string(je.job.value()) + ":" + std::to_string(je.epoch) + ":" +
         std::to_string(host);
}

bool ParseTag(const std::string& tag, int64_t& job, int64_t& epoch, int32_t& host) {
  long long j = 0, e = 0;
  int h = 0;
  char extra = 0;
  if (std::sscanf(tag.c_str(), "%lld:%lld:%d%c", &j, &e, &h, &extra) != 3) return false;
  job = j;
  epoch = e;
  host = h;
  return true;
}

static bus::Exited::Reason ToProto(ExitReason r) {
  switch (r) {
    case ExitReason::kCompleted: return bus::Exited::COMPLETED;
    case ExitReason::kFailed: return bus::Exited::FAILED;
    case ExitReason::kPreempted: return bus::Exited::PREEMPTED;
    case ExitReason::kKilledAfterGrace: return bus::Exited::KILLED_AFTER_GRACE;
    case ExitReason::kKilled: return bus::Exited::KILLED;
    case ExitReason::kReleased: return bus::Exited::RELEASED;
  }
  return bus::Exited::REASON_UNSPECIFIED;
}

void ToProto(const ExitReport& r, bus::Exited& e) {
  e.mutable_job()->set_job_id(r.job.job.value());
  e.mutable_job()->set_epoch(r.job.epoch);
  e.set_reason(ToProto(r.reason));
  e.set_exit_code(r.exit_code);
  e.set_last_checkpoint_step(r.last_checkpoint_step);
  for (int32_t h : r.hosts) e.add_hosts(h);
  e.set_message(r.message);
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}


Status Agent::OpenSockets() {
  // Signals arrive through a signalfd; none interrupts the loop asynchronously.
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT}) sigaddset(&mask, sig);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  signal(SIGPIPE, SIG_IGN);
  signal_fd_ = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd_ < 0) return Status(StatusCode::kInternal, "signalfd failed");

  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, o_.advertise.c_str(), &addr.sin_addr) != 1) {
    return Status(StatusCode::kInvalidArgument,
                  "--advertise '" + o_.advertise + "' is not an IPv4 address");
  }
  socklen_t len = sizeof addr;
  udp_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (udp_fd_ < 0 || bind(udp_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(udp_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Status(StatusCode::kUnavailable, std::string("progress socket: ") + strerror(errno));
  }
  progress_endpoint_ = "udp://" + o_.advertise + ":" + std::to_string(ntohs(addr.sin_port));

  addr.sin_port = htons(static_cast<uint16_t>(o_.rsh_port));
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  len = sizeof addr;
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 128) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Status(StatusCode::kUnavailable, std::string("rsh listener: ") + strerror(errno));
  }
  rsh_endpoint_ = FormatTcpEndpoint({o_.advertise, ntohs(addr.sin_port)});

  return OpenDealer();
}

Status Agent::OpenDealer() {
  try {
    dealer_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::dealer);
    dealer_->set(zmq::sockopt::routing_id, o_.agent_id);
    dealer_->set(zmq::sockopt::linger, 0);
    dealer_->set(zmq::sockopt::reconnect_ivl, 100);
    dealer_->set(zmq::sockopt::reconnect_ivl_max, 2000);
    dealer_->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(kMaxBusMessage));
    dealer_->set(zmq::sockopt::sndhwm, 10000);
    // Queue nothing while disconnected: heartbeats piled up during a scheduler outage would
    // arrive as a burst (each answered with Reregister) when it comes back.
    dealer_->set(zmq::sockopt::immediate, 1);
    if (!o_.bus_server_key.empty()) {
      dealer_->set(zmq::sockopt::curve_serverkey, o_.bus_server_key);
      dealer_->set(zmq::sockopt::curve_publickey, o_.bus_public_key);
      dealer_->set(zmq::sockopt::curve_secretkey, o_.bus_secret_key);
    }
    dealer_->connect(o_.bus);
  } catch (const zmq::error_t& e) {
    return Status(StatusCode::kInvalidArgument, "bus " + o_.bus + ": " + e.what());
  }
  send_failing_since_.reset();
  return Status::Ok();
}

int Agent::Run() {
  if (auto s = state_.Open(); !s.ok()) {
    spdlog::error("{}", s.ToString());
    return 1;
  }
  // Whatever a previous run of this agent left (it was killed with -9) goes first.
  if (int n = state_.KillLeftovers(5000); n > 0) {
    spdlog::warn("killed {} processes left by a previous run (state dir {})", n, state_.path());
  }
  // Orphaned descendants (orted's ranks when orted dies first) come back to us, not to init.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  if (auto s = OpenSockets(); !s.ok()) {
    spdlog::error("{}", s.ToString());
    return 1;
  }
  spdlog::info("podworker {} serving pod {} hosts {} on bus {}; rsh {}; progress {}", o_.agent_id,
               o_.pod, FormatHostList(o_.hosts), o_.bus, rsh_endpoint_, progress_endpoint_);
  SendRegister();

  while (!stop_) {
    std::vector<zmq::pollitem_t> items;
    std::vector<std::function<void(short)>> handlers;
    auto add_fd = [&](int fd, short events, std::function<void(short)> h) {
      items.push_back({nullptr, fd, events, 0});
      handlers.push_back(std::move(h));
    };
    items.push_back({dealer_->handle(), 0, ZMQ_POLLIN, 0});
    handlers.push_back([this](short) { OnBusReadable(); });
    add_fd(signal_fd_, ZMQ_POLLIN, [this](short) { OnSignal(); });
    add_fd(udp_fd_, ZMQ_POLLIN, [this](short) { OnProgressDatagram(); });
    add_fd(listen_fd_, ZMQ_POLLIN, [this](short) { OnAccept(); });
    for (auto& [id, job] : jobs_) {
      for (LinePipe* p : {&job.out, &job.err}) {
        if (p->fd >= 0) {
          add_fd(p->fd, ZMQ_POLLIN, [this, je = job.je, p](short) {
            if (Job* j = FindJob(je)) ReadJobPipe(*j, *p);
          });
        }
      }
    }
    for (auto& [fd, sp] : sessions_) {
      Session* s = sp.get();
      short ev = ZMQ_POLLIN;
      if (!s->sendbuf.empty()) ev |= ZMQ_POLLOUT;
      add_fd(fd, ev, [this, fd](short revents) {
        auto it = sessions_.find(fd);
        if (it == sessions_.end()) return;
        if (revents & ZMQ_POLLOUT) OnSessionWritable(*it->second);
        it = sessions_.find(fd);
        if (it != sessions_.end() && (revents & (ZMQ_POLLIN | ZMQ_POLLERR))) {
          OnSessionReadable(*it->second);
        }
      });
      if (s->sendbuf.size() < kRshBackpressure) {
        if (s->out >= 0) add_fd(s->out, ZMQ_POLLIN, [this, fd](short) {
            auto it = sessions_.find(fd);
            if (it != sessions_.end()) ReadSessionPipe(*it->second, it->second->out, false);
          });
        if (s->err >= 0) add_fd(s->err, ZMQ_POLLIN, [this, fd](short) {
            auto it = sessions_.find(fd);
            if (it != sessions_.end()) ReadSessionPipe(*it->second, it->second->err, true);
          });
      }
    }
    try {
      zmq::poll(items.data(), items.size(), milliseconds(100));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) spdlog::warn("poll: {}", e.what());
    }
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].revents != 0) handlers[i](items[i].revents);
    }

    const auto now = Steady::now();
    if (!welcomed_ && now >= next_register_) SendRegister();
    if (welcomed_ && now >= next_heartbeat_) SendHeartbeat();
    if (now >= next_scan_ && !jobs_.empty()) Scan();
    CheckJobs();
    RetryParkedSessions();
  }

  // Shutdown: nothing we started may outlive us.
  Scan();
  for (auto& [id, job] : jobs_) KillJob(job);
  for (auto& [fd, s] : sessions_) {
    if (s->pid > 0 && !s->reaped) kill(-s->pid, SIGKILL);
  }
  Scan();  // SIGKILLs what appeared meanwhile
  (void)state_.Record({});
  spdlog::info("podworker {} stopped", o_.agent_id);
  return 0;
}

// ---- bus ----

bool Agent::Send(const bus::Envelope& env) {
  const std::string bytes = env.SerializeAsString();
  bool sent = false;
  try {
    sent = dealer_->send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
  } catch (const zmq::error_t& e) {
    spdlog::warn("bus send: {}", e.what());
  }
  if (sent) {
    if (bus_down_logged_) spdlog::info("bus {} reachable again", o_.bus);
    bus_down_logged_ = false;
    send_failing_since_.reset();
    return true;
  }
  spdlog::debug("bus send queue full; message dropped");
  // libzmq does not reconnect after some protocol errors (a message above ZMQ_MAXMSGSIZE):
  // a bus that refuses every message for seconds gets a new socket, and the agent registers
  // again.
  const auto now = Steady::now();
  if (!send_failing_since_) send_failing_since_ = now;
  if (now - *send_failing_since_ > std::chrono::seconds(3)) {
    if (!bus_down_logged_) spdlog::warn("bus {} unreachable for 3 s: reconnecting with a new socket", o_.bus);
    bus_down_logged_ = true;
    if (auto st = OpenDealer(); !st.ok()) spdlog::error("{}", st.ToString());
    welcomed_ = false;
    next_register_ = now;
  }
  return false;
}

void Agent::FillRunning(google::protobuf::RepeatedPtrField<bus::RunningJob>* running) {
  for (const auto& [id, job] : jobs_) {
    auto* r = running->Add();
    r->mutable_job()->set_job_id(job.je.job.value());
    r->mutable_job()->set_epoch(job.je.epoch);
    for (int32_t h : job.my_hosts) r->add_hosts(h);
    for (pid_t p : job.pids) r->add_pids(p);
  }
}

void Agent::SendRegister() {
  bus::Envelope env;
  auto* r = env.mutable_register_();
  r->set_agent_id(o_.agent_id);
  r->set_pod(o_.pod);
  for (int32_t h : o_.hosts) r->add_hosts(h);
  FillRunning(r->mutable_running());
  r->set_rsh_endpoint(rsh_endpoint_);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  r->set_hostname(host);
  r->set_version(o_.version);
  for (const auto& e : book_.unacked()) ToProto(e, *r->add_unacked_exits());
  // Not connected yet (ZMQ_IMMEDIATE): try again soon rather than after the full retry period.
  next_register_ = Steady::now() + (Send(env) ? kRegisterRetry : milliseconds(100));
}

void Agent::SendHeartbeat() {
  bus::Envelope env;
  auto* hb = env.mutable_heartbeat();
  hb->set_agent_id(o_.agent_id);
  FillRunning(hb->mutable_running());
  for (const auto& e : book_.unacked()) ToProto(e, *hb->add_unacked_exits());
  Send(env);
  next_heartbeat_ = Steady::now() + heartbeat_interval_;
}

void Agent::Drop(const Rejection& r) {
  const int64_t n = ++dropped_[r.reason];
  spdlog::warn("dropped bus message ({}, {} so far): {}", r.reason, n, r.message);
}

void Agent::OnBusReadable() {
  while (true) {
    zmq::message_t msg;
    zmq::recv_result_t got;
    try {
      got = dealer_->recv(msg, zmq::recv_flags::dontwait);
    } catch (const zmq::error_t& e) {
      spdlog::warn("bus recv: {}", e.what());
      return;
    }
    if (!got) return;
    if (msg.more()) {
      // Not the single-frame protocol: drop the whole multi-part message.
      while (msg.more() && dealer_->recv(msg, zmq::recv_flags::dontwait)) {
      }
      Drop({"malformed", "multi-part message"});
      continue;
    }
    bus::Envelope env;
    if (auto r = ParseEnvelope(msg.to_string_view(), env)) {
      Drop(*r);
      continue;
    }
    OnEnvelope(env);
  }
}

void Agent::OnEnvelope(const bus::Envelope& env) {
  switch (env.body_case()) {
    case bus::Envelope::kWelcome: {
      const int32_t ms = env.welcome().heartbeat_interval_ms();
      heartbeat_interval_ = milliseconds(ms >= 10 && ms <= 600000 ? ms : 1000);
      if (!welcomed_) spdlog::info("welcomed by scheduler {}", env.welcome().scheduler_id());
      welcomed_ = true;
      next_heartbeat_ = Steady::now();
      return;
    }
    case bus::Envelope::kReregister:
      spdlog::info("scheduler asks to register again");
      welcomed_ = false;
      SendRegister();
      return;
    case bus::Envelope::kAck: {
      std::vector<JobEpoch> acked;
      for (const auto& je : env.ack().exits()) acked.push_back({JobId(je.job_id()), je.epoch()});
      book_.Ack(acked);
      return;
    }
    case bus::Envelope::kLaunch: return OnLaunch(env.launch());
    case bus::Envelope::kPreempt: return OnPreempt(env.preempt());
    case bus::Envelope::kKill: return OnKill(env.kill());
    default:
      Drop({"invalid", "message type " + std::to_string(env.body_case()) +
                           " is not for an agent"});
  }
}

// ---- processes ----

void Agent::OnSignal() {
  signalfd_siginfo si{};
  bool chld = false;
  while (read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    if (si.ssi_signo == SIGCHLD) {
      chld = true;
    } else {
      spdlog::info("signal {}: stopping", si.ssi_signo);
      stop_ = true;
    }
  }
  if (chld) Reap();
}

void Agent::Reap() {
  while (true) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (auto& [id, job] : jobs_) {
      if (job.mpirun == pid) {
        job.mpirun_reaped = true;
        job.mpirun_status = status;
        spdlog::info("job {} epoch {}: mpirun exited (status {:#x})", id.value(), job.je.epoch,
                     status);
      }
    }
    for (auto& [fd, s] : sessions_) {
      if (s->pid == pid) {
        s->reaped = true;
        s->status = status;
        MaybeFinishSession(*s);
        break;
      }
    }
    next_scan_ = Steady::now();
  }
}


}  // namespace podsched::agent::internal

namespace podsched::agent {

int RunAgent(const AgentOptions& options) {
  internal::Agent agent(options);
  return agent.Run();
}

}  // namespace podsched::agent
