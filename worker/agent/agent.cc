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

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <zmq.hpp>

#include "proto/bus.pb.h"
#include "store/objects/object_store.h"
#include "worker/agent/bus_validate.h"
#include "worker/agent/child.h"
#include "worker/agent/launch_book.h"
#include "worker/agent/mpirun_argv.h"
#include "worker/agent/process_tree.h"
#include "worker/agent/rsh_wire.h"
#include "worker/agent/state_dir.h"
#include "worker/train/progress.h"

namespace podsched::agent {
namespace {

using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kMaxLogMessage = 64 * 1024;
constexpr size_t kLogTail = 1 << 20;
constexpr size_t kRshBackpressure = 4 << 20;
constexpr auto kScanInterval = milliseconds(200);
constexpr auto kRegisterRetry = milliseconds(2000);

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
};

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

bus::Exited::Reason ToProto(ExitReason r) {
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

class Agent {
 public:
  explicit Agent(const AgentOptions& o) : o_(o), state_(o.state_dir) {}
  int Run();

 private:
  // Setup.
  Status OpenSockets();
  // Bus.
  void Send(const bus::Envelope& env);
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
  milliseconds heartbeat_interval_{1000};
  Steady::time_point next_heartbeat_, next_register_, next_scan_;
  std::map<pid_t, std::pair<uint64_t, std::string>> tag_cache_;  // pid -> (start, tag)
  std::map<pid_t, ProcInfo> procs_;                               // last scan
};

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

  try {
    dealer_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::dealer);
    dealer_->set(zmq::sockopt::routing_id, o_.agent_id);
    dealer_->set(zmq::sockopt::linger, 0);
    dealer_->set(zmq::sockopt::reconnect_ivl, 100);
    dealer_->set(zmq::sockopt::reconnect_ivl_max, 2000);
    dealer_->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(kMaxBusMessage));
    dealer_->set(zmq::sockopt::sndhwm, 10000);
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
               o_.pod, o_.hosts.size(), o_.bus, rsh_endpoint_, progress_endpoint_);
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

void Agent::Send(const bus::Envelope& env) {
  const std::string bytes = env.SerializeAsString();
  try {
    if (!dealer_->send(zmq::buffer(bytes), zmq::send_flags::dontwait)) {
      spdlog::debug("bus send queue full; message dropped");
    }
  } catch (const zmq::error_t& e) {
    spdlog::warn("bus send: {}", e.what());
  }
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
  Send(env);
  next_register_ = Steady::now() + kRegisterRetry;
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

// ---- jobs ----

void Agent::OnLaunch(const bus::Launch& l) {
  if (auto r = ValidateLaunch(l, o_.hosts)) return Drop(*r);
  const JobEpoch je{JobId(l.job().job_id()), l.job().epoch()};
  const auto outcome = book_.OnLaunch(je);
  switch (outcome.decision) {
    case LaunchBook::Decision::kStale:
      return Drop({"stale_epoch", "Launch of job " + std::to_string(je.job.value()) + " epoch " +
                                      std::to_string(je.epoch) + " (highest seen: " +
                                      std::to_string(book_.HighestEpoch(je.job)) + ")"});
    case LaunchBook::Decision::kReplaceOlder: {
      Job& old = jobs_.at(je.job);
      spdlog::warn("job {} epoch {} replaces running epoch {}: killing it first", je.job.value(),
                   je.epoch, old.je.epoch);
      old.next = l;
      Scan();
      KillJob(old);
      return;
    }
    case LaunchBook::Decision::kStart:
      return StartJob(l);
  }
}

void Agent::StartJob(const bus::Launch& l) {
  const JobEpoch je{JobId(l.job().job_id()), l.job().epoch()};
  Job& job = jobs_[je.job];
  job = Job{};
  job.launch = l;
  job.je = je;
  job.launched_at = Steady::now();
  job.grace_seconds = l.grace_seconds();
  for (int32_t h : l.hosts()) {
    if (std::binary_search(o_.hosts.begin(), o_.hosts.end(), h)) job.my_hosts.push_back(h);
  }
  std::sort(job.my_hosts.begin(), job.my_hosts.end());
  job.launcher = std::binary_search(o_.hosts.begin(), o_.hosts.end(), l.hosts(0));
  book_.MarkRunning(je);
  spdlog::info("job {} epoch {}: launch on hosts {} ({})", je.job.value(), je.epoch,
               l.hosts_size(), job.launcher ? "launcher" : "remote hosts only");
  if (!job.launcher) return;

  // The launcher: mpirun in its own process group, output to pipes and a spool file.
  std::vector<std::string> overrides, names;
  for (const auto& [name, value] : l.env()) {
    overrides.push_back(name + "=" + value);
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  overrides.push_back("POD_PROGRESS_ENDPOINT=" + progress_endpoint_);
  names.push_back("POD_PROGRESS_ENDPOINT");
  std::map<int32_t, std::string> eps(l.rsh_endpoints().begin(), l.rsh_endpoints().end());
  overrides.push_back("POD_RSH_ENDPOINTS=" + FormatRshEndpoints(eps));
  overrides.push_back("POD_RSH_TOKEN=" + l.rsh_token());
  overrides.push_back("POD_JOB_ID=" + std::to_string(je.job.value()));
  overrides.push_back("POD_EPOCH=" + std::to_string(je.epoch));
  overrides.push_back(std::string(kTagVariable) + "=" + TagValue(je, l.hosts(0)));

  MpirunPlan plan;
  plan.mpirun = o_.mpirun;
  plan.podworker = o_.podworker_path;
  plan.hosts.assign(l.hosts().begin(), l.hosts().end());
  plan.ranks_per_host = l.ranks_per_host();
  plan.command.assign(l.command().begin(), l.command().end());
  plan.env_names = names;
  plan.subnet = o_.mpi_subnet;
  plan.run_as_root = geteuid() == 0;
  plan.extra_args = o_.mpirun_args;
  auto argv = BuildMpirunArgv(plan);

  job.spool_path = state_.path() + "/job-" + std::to_string(je.job.value()) + "-epoch-" +
                   std::to_string(je.epoch) + ".log";
  job.spool_fd = open(job.spool_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

  Result<ChildProcess> child =
      argv ? SpawnChild(*argv, EnvironmentWith(overrides)) : std::unexpected(argv.error());
  if (!child) {
    spdlog::error("job {} epoch {}: cannot start mpirun: {}", je.job.value(), je.epoch,
                  child.error().ToString());
    job.mpirun_reaped = true;
    job.mpirun_status = 127 << 8;
    job.pending_log = "podworker: cannot start mpirun: " + child.error().message() + "\n";
    return;
  }
  job.mpirun = child->pid;
  job.out.fd = child->stdout_fd;
  job.err.fd = child->stderr_fd;
  next_scan_ = Steady::now();
}

void Agent::OnPreempt(const bus::Preempt& p) {
  if (auto r = ValidateJobControl(p.job(), book_.RunningEpoch(JobId(p.job().job_id())))) {
    return Drop(*r);
  }
  if (p.grace_seconds() < 0 || p.grace_seconds() > 24 * 3600) {
    return Drop({"invalid", "Preempt grace_seconds out of range"});
  }
  Job* job = FindJob({JobId(p.job().job_id()), p.job().epoch()});
  if (job == nullptr || job->preempt || job->kill) return;
  spdlog::info("job {} epoch {}: preempt ({}), grace {} s", job->je.job.value(), job->je.epoch,
               p.reason(), p.grace_seconds());
  job->preempt = true;
  job->grace_seconds = p.grace_seconds();
  job->grace_deadline = Steady::now() + std::chrono::seconds(p.grace_seconds());
  Scan();
  SignalRanks(*job);
}

void Agent::OnKill(const bus::Kill& k) {
  if (auto r = ValidateJobControl(k.job(), book_.RunningEpoch(JobId(k.job().job_id())))) {
    return Drop(*r);
  }
  Job* job = FindJob({JobId(k.job().job_id()), k.job().epoch()});
  if (job == nullptr) return;
  spdlog::info("job {} epoch {}: kill ({})", job->je.job.value(), job->je.epoch, k.reason());
  job->kill = true;
  Scan();
  KillJob(*job);
}

// SIGKILL to everything of the job known now; Scan() repeats it for processes found later.
void Agent::KillJob(Job& job) {
  if (!job.grace_expired) job.kill = true;
  if (job.mpirun > 0 && !job.mpirun_reaped) kill(-job.mpirun, SIGKILL);
  for (auto& [fd, s] : sessions_) {
    if (s->je == job.je && s->pid > 0 && !s->reaped) kill(-s->pid, SIGKILL);
  }
  for (pid_t p : job.pids) kill(p, SIGKILL);
}

// SIGTERM to the job's ranks: the children of an orted (not orted, not mpirun: a SIGTERM to
// those kills the ranks before their handler can checkpoint).
void Agent::SignalRanks(Job& job) {
  for (pid_t p : job.pids) {
    auto self = procs_.find(p);
    if (self == procs_.end()) continue;
    auto parent = procs_.find(self->second.ppid);
    if (parent == procs_.end() || parent->second.comm != "orted") continue;
    if (job.termed.insert(p).second) kill(p, SIGTERM);
  }
}

void Agent::Scan() {
  next_scan_ = Steady::now() + kScanInterval;
  procs_.clear();
  for (auto& [id, job] : jobs_) job.pids.clear();
  std::vector<std::pair<pid_t, uint64_t>> record;
  std::map<pid_t, std::pair<uint64_t, std::string>> cache;
  for (pid_t pid : Descendants(getpid())) {
    auto info = ReadProc(pid);
    if (!info) continue;
    procs_[pid] = *info;
    if (info->zombie) continue;
    record.emplace_back(pid, info->start_time);
    auto cached = tag_cache_.find(pid);
    std::string tag;
    if (cached != tag_cache_.end() && cached->second.first == info->start_time) {
      tag = cached->second.second;
    } else {
      tag = ReadEnvVar(pid, kTagVariable).value_or("");
    }
    cache[pid] = {info->start_time, tag};
    int64_t job_id = 0, epoch = 0;
    int32_t host = 0;
    if (!ParseTag(tag, job_id, epoch, host)) continue;
    Job* job = FindJob({JobId(job_id), epoch});
    if (job == nullptr) {
      // A process of an epoch this agent no longer runs: never two epochs of one job.
      spdlog::warn("killing pid {} ({}) of job {} epoch {}, which does not run here", pid,
                   info->comm, job_id, epoch);
      kill(pid, SIGKILL);
      continue;
    }
    job->pids.push_back(pid);
  }
  tag_cache_ = std::move(cache);
  if (auto s = state_.Record(std::move(record)); !s.ok()) spdlog::warn("{}", s.ToString());

  const auto now = Steady::now();
  for (auto& [id, job] : jobs_) {
    if (job.kill || job.grace_expired) {
      for (pid_t p : job.pids) kill(p, SIGKILL);
      continue;
    }
    if (!job.preempt) continue;
    SignalRanks(job);  // ranks that started after the Preempt
    if (now < job.grace_deadline) continue;
    const bool ranks_alive = std::any_of(job.pids.begin(), job.pids.end(), [&](pid_t p) {
      auto parent = procs_.find(procs_[p].ppid);
      return parent != procs_.end() && parent->second.comm == "orted";
    });
    if (!ranks_alive && job.grace_extensions < 5) {
      // The ranks exited in time; mpirun and orted are still winding down.
      ++job.grace_extensions;
      job.grace_deadline = now + std::chrono::seconds(1);
      continue;
    }
    spdlog::warn("job {} epoch {}: grace of {} s over, SIGKILL", job.je.job.value(), job.je.epoch,
                 job.grace_seconds);
    job.grace_expired = true;
    KillJob(job);
  }
}

void Agent::CheckJobs() {
  const auto now = Steady::now();
  std::vector<JobId> ended;
  for (auto& [id, job] : jobs_) {
    const bool sessions_open = std::any_of(sessions_.begin(), sessions_.end(),
                                           [&](const auto& s) { return s.second->je == job.je; });
    if (sessions_open || !job.pids.empty() || job.out.fd >= 0 || job.err.fd >= 0) continue;
    if (job.launcher) {
      if (!job.mpirun_reaped) continue;
    } else {
      const bool all_sessions_seen = job.session_hosts.size() == job.my_hosts.size();
      const bool timed_out = now - job.launched_at > milliseconds(o_.start_timeout_ms);
      if (!all_sessions_seen && !job.kill && !job.preempt && !timed_out) continue;
    }
    // The last scan may predate the newest processes: look once more before declaring it gone.
    if (now - (next_scan_ - kScanInterval) > milliseconds(20)) {
      Scan();
      if (!job.pids.empty()) continue;
    }
    ended.push_back(id);
  }
  for (JobId id : ended) {
    auto it = jobs_.find(id);
    if (it != jobs_.end()) FinishJob(it->second);
  }
}

void Agent::FinishJob(Job& job) {
  ExitReport report;
  report.job = job.je;
  report.hosts = job.my_hosts;
  report.last_checkpoint_step = job.last_checkpoint_step;
  if (job.launcher) {
    const Verdict v = ClassifyExit({job.mpirun_status, job.kill, job.preempt, job.grace_expired,
                                    job.grace_seconds});
    report.reason = v.reason;
    report.exit_code = v.exit_code;
    report.message = v.message;
    FlushLog(job, /*final=*/true);
    UploadLog(job);
  } else {
    report.reason = ExitReason::kReleased;
    report.message = job.session_hosts.empty() ? "no process was started here"
                                                : "processes gone";
  }
  spdlog::info("job {} epoch {}: exited {} ({})", job.je.job.value(), job.je.epoch,
               ExitReasonName(report.reason), report.message);
  book_.AddExit(report);
  book_.MarkEnded(job.je);
  bus::Envelope env;
  ToProto(report, *env.mutable_exited());
  Send(env);
  CloseFd(job.spool_fd);
  if (!job.spool_path.empty()) std::filesystem::remove(job.spool_path);
  std::optional<bus::Launch> next = std::move(job.next);
  jobs_.erase(job.je.job);
  if (next) StartJob(*next);
}

void Agent::ReadJobPipe(Job& job, LinePipe& pipe) {
  char buf[65536];
  const ssize_t n = read(pipe.fd, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    if (!pipe.partial.empty()) {
      job.pending_log += pipe.partial + "\n";
      pipe.partial.clear();
    }
    CloseFd(pipe.fd);
    FlushLog(job, false);
    return;
  }
  const std::string_view data(buf, static_cast<size_t>(n));
  pipe.partial.append(data);
  const size_t last_nl = pipe.partial.rfind('\n');
  if (last_nl != std::string::npos) {
    job.pending_log.append(pipe.partial, 0, last_nl + 1);
    pipe.partial.erase(0, last_nl + 1);
  }
  if (pipe.partial.size() >= kMaxLogMessage) {  // a line longer than a Log message: cut it
    job.pending_log += pipe.partial + "\n";
    pipe.partial.clear();
  }
  FlushLog(job, false);
}

void Agent::FlushLog(Job& job, bool final) {
  if (final) {
    for (LinePipe* p : {&job.out, &job.err}) {
      if (!p->partial.empty()) job.pending_log += p->partial + "\n";
      p->partial.clear();
    }
  }
  while (!job.pending_log.empty()) {
    size_t n = job.pending_log.size();
    if (n > kMaxLogMessage) {
      const size_t nl = job.pending_log.rfind('\n', kMaxLogMessage - 1);
      n = nl == std::string::npos ? kMaxLogMessage : nl + 1;
    }
    const std::string_view chunk(job.pending_log.data(), n);
    if (job.spool_fd >= 0) (void)!write(job.spool_fd, chunk.data(), chunk.size());
    job.tail.append(chunk);
    if (job.tail.size() > kLogTail) job.tail.erase(0, job.tail.size() - kLogTail);
    bus::Envelope env;
    auto* log = env.mutable_log();
    log->mutable_job()->set_job_id(job.je.job.value());
    log->mutable_job()->set_epoch(job.je.epoch);
    log->set_offset(job.log_offset);
    log->set_data(std::string(chunk));
    Send(env);
    job.log_offset += static_cast<int64_t>(n);
    job.pending_log.erase(0, n);
  }
}

void Agent::UploadLog(Job& job) {
  if (job.launch.log_url().empty()) return;
  auto store = store::OpenObjectStore(job.launch.log_url());
  const std::string key = std::to_string(job.je.job.value()) + "/logs/epoch-" +
                          std::to_string(job.je.epoch) + ".log";
  if (!store) {
    spdlog::warn("job {}: log store {}: {}", job.je.job.value(), job.launch.log_url(),
                 store.error().ToString());
    return;
  }
  std::ifstream in(job.spool_path, std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (auto s = (*store)->Put(key, all); !s.ok()) {
    spdlog::warn("job {}: storing {}: {}", job.je.job.value(), key, s.ToString());
  }
}

// ---- progress ----

void Agent::OnProgressDatagram() {
  char buf[65536];
  while (true) {
    const ssize_t n = recv(udp_fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) return;
    auto p = train::ParseProgressJson(std::string_view(buf, static_cast<size_t>(n)));
    if (!p) {
      Drop({"progress_malformed", p.error().message()});
      continue;
    }
    Job* job = nullptr;
    for (auto& [id, j] : jobs_) {
      if (j.launcher && std::to_string(id.value()) == p->job && j.je.epoch == p->epoch) job = &j;
    }
    if (job == nullptr) {
      Drop({"progress_other_job", "progress of job '" + p->job.substr(0, 32) + "' epoch " +
                                      std::to_string(p->epoch) + " does not run here"});
      continue;
    }
    if (const int64_t step = train::CheckpointStep(p->checkpoint); step > 0) {
      job->last_checkpoint_step = step;
    }
    bus::Envelope env;
    auto* pr = env.mutable_progress();
    pr->mutable_job()->set_job_id(job->je.job.value());
    pr->mutable_job()->set_epoch(job->je.epoch);  // from the Launch, never from the datagram
    pr->set_step(p->step);
    pr->set_loss(p->loss);
    pr->set_accuracy(p->accuracy);
    pr->set_examples_per_second(p->examples_per_s);
    pr->set_last_checkpoint_step(job->last_checkpoint_step);
    pr->set_total_steps(p->steps);
    Send(env);
  }
}

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
  if (s.started || s.finishing) return;  // nothing more is expected from the client
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

  const std::vector<std::string> argv(req.argv().begin(), req.argv().end());
  auto child = SpawnChild({"/bin/sh", "-c", JoinForShell(argv)},
                          EnvironmentWith({"POD_HOST=" + std::to_string(req.host()),
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

}  // namespace

int RunAgent(const AgentOptions& options) {
  Agent agent(options);
  return agent.Run();
}

}  // namespace podsched::agent
