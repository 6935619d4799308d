#include "worker/agent/agent.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <zmq.hpp>

#include "common/clock.h"
#include "proto/bus.pb.h"
#include "worker/agent/bus_pacer.h"
#include "worker/agent/bus_validate.h"
#include "common/host_list.h"
#include "common/key_file.h"
#include "worker/agent/job_runner.h"
#include "worker/agent/output_spool.h"
#include "worker/agent/poll_set.h"
#include "worker/agent/rsh_server.h"
#include "worker/agent/state_dir.h"
#include "worker/progress/progress_wire.h"

namespace podsched::agent {

// Progress datagrams read per turn of the poll loop (Agent::OnProgressDatagram).
constexpr int kMaxDatagramsPerTurn = 256;

namespace {

// The loop: the bus DEALER, the signalfd, the progress socket and the spool's eventfd are its
// own; jobs and their processes are JobRunner's, the rsh side channel RshServer's, stored output
// OutputSpool's (whose copies run on its own thread).
class Agent {
 public:
  explicit Agent(const AgentOptions& o)
      : o_(o),
        state_(o.state_dir),
        pacer_(clock_.Now()),
        spool_(o.state_dir, [this](const JobEpoch& je) { runner_.OnOutputStored(je); }),
        runner_(o_, clock_, state_, spool_, [this](const bus::Envelope& e) { return Send(e); }),
        rsh_(o_, clock_, state_, runner_) {
    runner_.set_sessions(&rsh_);
  }
  ~Agent() {
    if (signal_fd_ >= 0) close(signal_fd_);
    if (udp_fd_ >= 0) close(udp_fd_);
  }
  int Run();

 private:
  Status OpenSignals();
  Status OpenProgressSocket();
  Status OpenDealer();
  // false when the message could not be queued (not connected, queue full): it is dropped.
  bool Send(const bus::Envelope& env);
  void SendRegister();
  void SendHeartbeat();
  void OnBusReadable();
  void OnEnvelope(const bus::Envelope& env);
  void Drop(const Rejection& r);
  void OnProgressDatagram();
  void OnSignal();

  const AgentOptions o_;
  RealMonotonicClock clock_;
  StateDir state_;
  zmq::context_t ctx_;
  std::unique_ptr<zmq::socket_t> dealer_;
  BusPacer pacer_;
  int signal_fd_ = -1, udp_fd_ = -1;
  std::string progress_endpoint_;
  OutputSpool spool_;
  JobRunner runner_;
  RshServer rsh_;
  std::map<std::string, int64_t> dropped_;
  bool stop_ = false;
  // SIGTERM/SIGINT with jobs running: they are preempted first; the agent stops once every exit
  // is acknowledged, or at drain_deadline_. A second signal stops at once.
  bool draining_ = false;
  MonotonicTime drain_deadline_{};
};

Status Agent::OpenSignals() {
  // Signals arrive through a signalfd; none interrupts the loop asynchronously.
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT}) sigaddset(&mask, sig);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  signal(SIGPIPE, SIG_IGN);
  signal_fd_ = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd_ < 0) return Status(StatusCode::kInternal, "signalfd failed");
  return Status::Ok();
}

Status Agent::OpenProgressSocket() {
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
  runner_.set_progress_endpoint(progress_endpoint_);
  return Status::Ok();
}

Status Agent::OpenDealer() {
  try {
    dealer_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::dealer);
    // A fresh nonce per socket: only this connection can take its route at podsched back.
    dealer_->set(zmq::sockopt::routing_id, NewBusRoutingId(o_.agent_id));
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
  return Status::Ok();
}

int Agent::Run() {
  if (auto s = state_.Open(); !s.ok()) {
    spdlog::error("{}", s.ToString());
    return 1;
  }
  // Whatever a previous run of this agent left (it was killed with -9) goes first.
  if (int n = state_.KillLeftovers(std::chrono::seconds(5), clock_); n > 0) {
    spdlog::warn("killed {} processes left by a previous run (state dir {})", n, state_.path());
  }
  // Orphaned descendants (orted's ranks when orted dies first) come back to us, not to init.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const std::function<Status()> open[] = {
      [this] { return OpenSignals(); }, [this] { return OpenProgressSocket(); },
      [this] { return rsh_.Listen(); }, [this] { return spool_.Start(); },
      [this] { return OpenDealer(); }};
  for (const auto& step : open) {
    if (Status s = step(); !s.ok()) {
      spdlog::error("{}", s.ToString());
      return 1;
    }
  }
  // Then what it left on disk: no job survives an agent restart. After OpenSignals: the removals
  // as the directories' owners are child processes, reaped by the loop.
  if (int n = state_.RemoveLeftovers(); n > 0) {
    spdlog::warn("removing {} job directories and output spool files left by a previous run", n);
  }
  spdlog::info("podworker {} serving pod {} hosts {} on bus {}; rsh {}; progress {}", o_.agent_id,
               o_.pod, FormatHostRanges(o_.hosts), o_.bus, rsh_.endpoint(), progress_endpoint_);
  SendRegister();
  const MonotonicTime started = clock_.Now();
  bool warned_unwelcome = false;

  while (!stop_) {
    PollSet poll;
    poll.AddSocket(*dealer_, ZMQ_POLLIN, [this](short) { OnBusReadable(); });
    poll.AddFd(signal_fd_, ZMQ_POLLIN, [this](short) { OnSignal(); });
    poll.AddFd(udp_fd_, ZMQ_POLLIN, [this](short) { OnProgressDatagram(); });
    poll.AddFd(spool_.fd(), ZMQ_POLLIN, [this](short) { spool_.OnReadable(); });
    rsh_.AddPollItems(poll);
    runner_.AddPollItems(poll);
    poll.Poll(std::chrono::milliseconds(100));

    const MonotonicTime now = clock_.Now();
    if (pacer_.RegisterDue(now)) SendRegister();
    // A CURVE handshake that fails (no key file against a CURVE bus, a key not enrolled or
    // revoked, a wrong pinned server key) looks like silence on a DEALER: say what it means.
    if (!warned_unwelcome && !pacer_.welcomed() && now - started > std::chrono::seconds(5)) {
      warned_unwelcome = true;
      spdlog::warn(
          "no Welcome from podsched at {} after 5 s. {}", o_.bus,
          o_.bus_server_key.empty()
              ? "podsched's bus uses CURVE by default: enrol this agent on the controller "
                "(podsched agent enroll --agent-id " + o_.agent_id +
                    " --out FILE), then start podworker --bus-key-file FILE"
              : "The handshake or the Register is refused: is this key still enrolled for "
                "agent id " + o_.agent_id + ", and for every host of --hosts " +
                    FormatHostRanges(o_.hosts) + " (podsched agent list; refusals are counted in "
                    "podsched_bus_dropped_total{reason=\"host_not_enrolled\"}), and is the "
                    "server key pinned in the key file podsched's (<data_dir>/bus.key)?");
    }
    runner_.Tick();
    if (draining_ && ((runner_.idle() && runner_.unacked().empty()) || now >= drain_deadline_)) {
      stop_ = true;
    }
    // A host's ranks came up: say so now (the job becomes RUNNING), not at the next beat.
    if (pacer_.HeartbeatDue(now) || (runner_.TakeRanksUpNews() && pacer_.welcomed())) {
      SendHeartbeat();
    }
    rsh_.Tick();
  }

  // Shutdown: nothing we started may outlive us.
  runner_.KillAll();
  rsh_.KillEverything();
  runner_.FinalScan();
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
  const BusPacer::SendOutcome out = pacer_.SendResult(clock_.Now(), sent);
  if (out.recovered) spdlog::info("bus {} reachable again", o_.bus);
  if (sent) return true;
  spdlog::debug("bus send queue full; message dropped");
  if (out.reconnect) {
    if (out.outage_began) {
      spdlog::warn("bus {} unreachable for 3 s: reconnecting with a new socket", o_.bus);
    }
    if (auto st = OpenDealer(); !st.ok()) spdlog::error("{}", st.ToString());
  }
  return false;
}

void Agent::SendRegister() {
  bus::Envelope env;
  auto* r = env.mutable_register_();
  r->set_agent_id(o_.agent_id);
  r->set_pod(o_.pod);
  for (int32_t h : o_.hosts) r->add_hosts(h);
  runner_.FillRunning(r->mutable_running());
  r->set_rsh_endpoint(rsh_.endpoint());
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  r->set_hostname(host);
  r->set_version(o_.version);
  for (const auto& e : runner_.unacked()) ToProto(e, *r->add_unacked_exits());
  const bool queued = Send(env);
  pacer_.RegisterSent(clock_.Now(), queued);
}

void Agent::SendHeartbeat() {
  bus::Envelope env;
  auto* hb = env.mutable_heartbeat();
  hb->set_agent_id(o_.agent_id);
  runner_.FillRunning(hb->mutable_running());
  for (const auto& e : runner_.unacked()) ToProto(e, *hb->add_unacked_exits());
  Send(env);
  pacer_.HeartbeatSent(clock_.Now());
  state_.RmdirEmptied();  // epoch directories whose owners' removals have run since
}

void Agent::Drop(const Rejection& r) {
  const int64_t n = ++dropped_[r.reason];
  // The first ten of a reason, then one in a thousand: a flood of bad datagrams must not turn
  // into a flood of flushed log lines (audit M2).
  if (n <= 10 || n % 1000 == 0) {
    spdlog::warn("dropped {} ({}, {} so far): {}",
                 r.reason.starts_with("progress") ? "progress datagram" : "bus message", r.reason,
                 n, r.message);
  }
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
  std::optional<Rejection> rejected;
  switch (env.body_case()) {
    case bus::Envelope::kWelcome:
      if (pacer_.Welcome(clock_.Now(), env.welcome().heartbeat_interval_ms())) {
        spdlog::info("welcomed by scheduler {}", env.welcome().scheduler_id());
      }
      return;
    case bus::Envelope::kReregister:
      spdlog::info("scheduler asks to register again");
      pacer_.Reregister();
      SendRegister();
      return;
    case bus::Envelope::kAck: {
      std::vector<JobEpoch> acked;
      for (const auto& je : env.ack().exits()) acked.push_back({JobId(je.job_id()), je.epoch()});
      runner_.OnAck(acked);
      return;
    }
    case bus::Envelope::kLaunch: rejected = runner_.OnLaunch(env.launch()); break;
    case bus::Envelope::kPreempt: rejected = runner_.OnPreempt(env.preempt()); break;
    case bus::Envelope::kKill: rejected = runner_.OnKill(env.kill()); break;
    default:
      rejected = Rejection{"invalid", "message type " + std::to_string(env.body_case()) +
                                          " is not for an agent"};
  }
  if (rejected) Drop(*rejected);
}

// ---- progress datagrams ----

void Agent::OnProgressDatagram() {
  char buf[65536];
  // At most this many per turn of the poll loop, the rest at the next turns: a flood of
  // datagrams (anyone on the network can send them) must not stop heartbeats (audit M2).
  for (int i = 0; i < kMaxDatagramsPerTurn; ++i) {
    const ssize_t n = recv(udp_fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) return;
    auto p = progress::ParseProgressJson(std::string_view(buf, static_cast<size_t>(n)));
    if (!p) {
      Drop({"progress_malformed", p.error().message()});
      continue;
    }
    if (auto r = runner_.OnProgress(*p)) Drop(*r);
  }
}

// ---- signals and children ----

void Agent::OnSignal() {
  signalfd_siginfo si{};
  bool chld = false;
  while (read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    if (si.ssi_signo == SIGCHLD) {
      chld = true;
    } else if (draining_ || runner_.idle()) {
      spdlog::info("signal {}: stopping", si.ssi_signo);
      stop_ = true;
    } else {
      spdlog::info("signal {}: preempting the jobs (up to {} s), then stopping; signal again to "
                   "stop at once", si.ssi_signo, o_.stop_grace_seconds);
      draining_ = true;
      drain_deadline_ = clock_.Now() + std::chrono::seconds(o_.stop_grace_seconds + 5);
      runner_.PreemptAll(o_.stop_grace_seconds, "podworker stopping");
    }
  }
  while (chld) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    runner_.OnReaped(pid, status);
    rsh_.OnReaped(pid, status);
    runner_.ScanSoon();
  }
}

}  // namespace

int RunAgent(const AgentOptions& options) {
  Agent agent(options);
  return agent.Run();
}

}  // namespace podsched::agent
