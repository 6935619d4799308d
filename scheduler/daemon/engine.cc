#include "scheduler/daemon/engine.h"

#include <charconv>
#include <chrono>

#include "api.pb.h"
#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/json_util.h"
#include "scheduler/daemon/web_session.h"

namespace podsched::daemon {

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDataLoss:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

HttpResponse ErrorResponse(int status, std::string_view code, std::string_view message) {
  HttpResponse r;
  r.status = status;
  r.body = ErrorJson(code, message);
  if (status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

namespace {

HttpResponse Json(const google::protobuf::Message& m, int status = 200) {
  HttpResponse r;
  r.status = status;
  r.body = ToJson(m);
  return r;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string DefaultCheckpointUrl(const Config& config) {
  return config.default_checkpoint_url.empty()
             ? "file://" + config.data_dir + "/objects/checkpoints"
             : config.default_checkpoint_url;
}

HttpResponse StatusError(const Status& s) {
  return ErrorResponse(HttpStatusOf(s.code()), StatusCodeName(s.code()), s.message());
}

}  // namespace

Engine::Engine(const Config& config, std::vector<UserConfig> users, core::JobRepository* repo,
               BufferingRepository::CommitAll commit_all)
    : config_(config),
      auth_(std::move(users)),
      limiter_(config.limits.requests_per_second, config.limits.burst),
      web_(config.web_root),
      repo_(repo, std::move(commit_all)) {}

Result<std::unique_ptr<Engine>> Engine::Create(const Config& config, std::vector<UserConfig> users,
                                               core::JobRepository* repo, TimePoint now,
                                               bool group_commit,
                                               BufferingRepository::CommitAll commit_all) {
  const PodConfig& pc = config.pods.front();
  auto pod = pod::Pod::Create(pc.name, pc.generation, pc.host_rows, pc.host_cols);
  if (!pod) return std::unexpected(pod.error().WithContext("pods[0]"));
  std::unique_ptr<Engine> engine(new Engine(config, std::move(users), repo, std::move(commit_all)));
  auto scheduler = core::Scheduler::Create(std::move(*pod), config.scheduler, &engine->repo_, now);
  if (!scheduler) return std::unexpected(scheduler.error());
  engine->scheduler_ = std::move(*scheduler);
  BusLogic::Options bus;
  bus.bus = config.bus;
  bus.default_checkpoint_url = DefaultCheckpointUrl(config);
  bus.log_url = config.bus.log_url.empty() ? "file://" + config.data_dir + "/objects/logs"
                                           : config.bus.log_url;
  bus.scheduler_id = NewToken().substr(0, 16);
  bus.tick_interval = std::chrono::milliseconds(config.tick_interval_ms);
  engine->bus_ = std::make_unique<BusLogic>(std::move(bus), engine->scheduler_.get());
  if (Status s = engine->bus_->Start(now); !s.ok()) return std::unexpected(s);
  for (const auto& [user, quota] : config.quotas) {
    if (engine->scheduler_->QuotaOf(UserName(user)) == quota) continue;
    if (Status s = engine->scheduler_->SetQuota(UserName(user), quota, now); !s.ok()) {
      return std::unexpected(s.WithContext("quotas." + user));
    }
  }
  engine->repo_.TakeEvents();  // history is not streamed
  engine->repo_.set_deferred(group_commit);
  return engine;
}

Status Engine::Flush(TimePoint now) {
  Status s = repo_.Flush();
  if (!s.ok()) {
    fatal_ = true;
    return s;
  }
  if (!fatal_) DrainBus();
  Publish(now);
  return s;
}

void Engine::DrainBus() {
  std::vector<BusOutgoing> out = bus_->TakeOutgoing();
  std::vector<BusOutgoing> acks = bus_->TakeAcks();
  if (!send_bus_) return;
  for (auto& m : out) send_bus_(std::move(m));
  for (auto& m : acks) send_bus_(std::move(m));
}

void Engine::Check(const Status& s) {
  if (!s.ok()) fatal_ = true;
}

void Engine::OnBusMessage(std::string_view agent_id, std::string_view bytes, TimePoint now) {
  Check(bus_->OnMessage(agent_id, bytes, now));
  if (!repo_.deferred() && !fatal_) DrainBus();
  Publish(now);
}

HttpResponse Engine::FromStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInternal:
    case StatusCode::kUnavailable:
    case StatusCode::kDataLoss:
      // Only the store fails this way inside the core: memory is now ahead of the disk.
      fatal_ = true;
      return ErrorResponse(503, "unavailable", "the job store failed; podsched is restarting");
    default:
      return StatusError(status);
  }
}

HttpResponse Engine::Handle(const HttpRequest& request, TimePoint now) {
  HttpResponse response;
  ParsedTarget target = ParseTarget(request.target);
  if (target.path == "/healthz") {
    response.body = fatal_ ? R"({"status":"failing"})" : R"({"status":"ok"})";
    response.status = fatal_ ? 503 : 200;
  } else if (target.path == "/metrics") {
    response =
        request.method == "GET" ? Metrics() : ErrorResponse(405, "method_not_allowed", "use GET");
  } else if (target.path != "/api" && !target.path.starts_with("/api/")) {
    response = web_.Serve(request.method, target.path, request.target);  // the dashboard
  } else if (!target.path.starts_with("/api/v1/") && target.path != "/api/v1") {
    response = ErrorResponse(404, "not_found",
                             "no such resource: " + target.path + " (the API lives under /api/v1)");
  } else if (target.path == "/api/v1/login") {
    response = Login(request, auth_, sessions_, now);
  } else if (target.path == "/api/v1/logout") {
    response = Logout(request, sessions_);
  } else if (auto who = AuthenticateRequest(request, auth_, sessions_, now); !who) {
    response = StatusError(who.error());
  } else if (!limiter_.Allow(who->who.user, now)) {
    response =
        ErrorResponse(429, "resource_exhausted",
                      "rate limit of " + std::to_string(int(config_.limits.requests_per_second)) +
                          " requests/s per token exceeded; retry later");
    response.headers.emplace_back("Retry-After", "1");
  } else {
    response = Route(request, who->who, now);
  }
  metrics_.CountRequest(response.status);
  Publish(now);
  return response;
}

HttpResponse Engine::Route(const HttpRequest& request, const Principal& who, TimePoint now) {
  ParsedTarget target = ParseTarget(request.target);
  std::vector<std::string> seg = SplitPath(target.path);  // api v1 ...
  const std::string& m = request.method;
  auto method_not_allowed = [&](std::string_view allowed) {
    return ErrorResponse(405, "method_not_allowed",
                         m + " is not allowed on " + target.path + "; use " + std::string(allowed));
  };
  if (seg.size() < 3) return ErrorResponse(404, "not_found", "no such resource: " + target.path);
  const std::string& res = seg[2];
  if (res == "jobs" && seg.size() == 3) {
    if (m == "POST") return Submit(request, who, now);
    if (m == "GET") return List(target, who, now);
    return method_not_allowed("GET or POST");
  }
  if (res == "jobs" && (seg.size() == 4 || seg.size() == 5)) {
    auto id = ParseInt(seg[3]);
    if (!id || *id <= 0) {
      return ErrorResponse(404, "not_found", "no job '" + seg[3] + "' (ids are numbers)");
    }
    return JobVerb(seg.size() == 5 ? seg[4] : "", request, JobId(*id), who, now);
  }
  if (res == "pods" && seg.size() <= 4) {
    if (m != "GET") return method_not_allowed("GET");
    api::Pod pod = PodToProto(*scheduler_);
    for (auto& h : *pod.mutable_hosts()) {
      const HostHealth& bh = bus_->hosts()[static_cast<size_t>(h.id())];
      h.set_agent_id(bh.agent_id);
      h.set_health_reason(bh.reason);
    }
    if (seg.size() == 4 && seg[3] != pod.name()) {
      return ErrorResponse(404, "not_found", "no pod '" + seg[3] + "'; pods: " + pod.name());
    }
    if (!who.admin) {  // others' jobs are invisible: show their hosts as held, not by whom
      for (auto& h : *pod.mutable_hosts()) {
        const auto* j = h.job_id() ? scheduler_->Find(JobId(h.job_id())) : nullptr;
        if (j && j->spec.user.value() != who.user) h.set_job_id(0);
      }
      for (auto& a : *pod.mutable_allocations()) {
        if (a.user() == who.user) continue;
        a.set_job_id(0);  // someone else's: where, not who
        a.set_user("");
      }
      google::protobuf::RepeatedPtrField<api::PendingJob> pending;
      for (auto& p : pod.pending()) {
        if (p.user() == who.user) *pending.Add() = p;
      }
      pod.mutable_pending()->Swap(&pending);
    }
    if (seg.size() == 4) return Json(pod);
    api::PodList list;
    *list.add_pods() = std::move(pod);
    return Json(list);
  }
  if (res == "quotas" && seg.size() == 3) return Quotas(request, who, now);
  if (res == "agents" && seg.size() == 3) {
    if (m != "GET") return method_not_allowed("GET");
    return Agents(who, now);
  }
  if (res == "users" && seg.size() == 3) {
    if (m != "GET") return method_not_allowed("GET");
    return Users(who);
  }
  if (res == "stats" && seg.size() == 3) {  // the dashboard's history (usage_history.h)
    if (m != "GET") return method_not_allowed("GET");
    return Json(history_.ToProto(*scheduler_, now));
  }
  if (res == "whoami" && seg.size() == 3) {
    api::User u;
    u.set_name(who.user);
    u.set_role(who.admin ? "admin" : "user");
    return Json(u);
  }
  return ErrorResponse(404, "not_found", "no such resource: " + target.path);
}

HttpResponse Engine::Submit(const HttpRequest& request, const Principal& who, TimePoint now) {
  api::JobSpec in;
  JsonLimits limits{config_.limits.max_json_depth, 64 << 10};
  if (Status s = ParseJson(request.body, limits, &in); !s.ok()) return StatusError(s);
  auto spec = SpecFromProto(in, who.user, DefaultCheckpointUrl(config_));
  if (!spec) return StatusError(spec.error());
  auto id = scheduler_->Submit(std::move(*spec), now);
  if (!id) return FromStatus(id.error());
  api::SubmitResponse out;
  *out.mutable_job() = JobToProto(*scheduler_->Find(*id), scheduler_->pod(), now, true);
  HttpResponse r = Json(out, 201);
  r.headers.emplace_back("Location", "/api/v1/jobs/" + std::to_string(id->value()));
  return r;
}

HttpResponse Engine::List(const ParsedTarget& target, const Principal& who, TimePoint now) {
  const auto& q = target.query;
  std::optional<core::JobState> state;
  if (auto it = q.find("state"); it != q.end() && !it->second.empty()) {
    std::string upper = it->second;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    auto parsed = core::ParseJobState(upper);
    if (!parsed) return StatusError(parsed.error());
    state = *parsed;
  }
  std::optional<bool> preemptible;
  if (auto it = q.find("class"); it != q.end() && !it->second.empty()) {
    if (it->second != "on-demand" && it->second != "preemptible") {
      return ErrorResponse(400, "invalid_argument",
                           "class '" + it->second + "' is not valid; use on-demand or preemptible");
    }
    preemptible = it->second == "preemptible";
  }
  std::optional<std::string> user;
  if (auto it = q.find("user"); it != q.end() && !it->second.empty()) user = it->second;
  if (!who.admin) user = who.user;  // a user lists only their own jobs
  int page_size = config_.limits.default_page_size;
  if (auto it = q.find("page_size"); it != q.end()) {
    auto n = ParseInt(it->second);
    if (!n || *n < 1 || *n > config_.limits.max_page_size) {
      return ErrorResponse(400, "invalid_argument",
                           "page_size must be 1.." + std::to_string(config_.limits.max_page_size));
    }
    page_size = static_cast<int>(*n);
  }
  int64_t after = 0;
  if (auto it = q.find("page_token"); it != q.end() && !it->second.empty()) {
    auto n = ParseInt(it->second);
    if (!n || *n < 0) return ErrorResponse(400, "invalid_argument", "invalid page_token");
    after = *n;
  }
  api::JobList out;
  int total = 0;
  for (const auto& [id, job] : scheduler_->jobs()) {
    if (state && job.state != *state) continue;
    if (preemptible && job.spec.preemptible != *preemptible) continue;
    if (user && job.spec.user.value() != *user) continue;
    ++total;
    if (id.value() <= after) continue;
    if (out.jobs_size() < page_size) {
      *out.add_jobs() = JobToProto(job, scheduler_->pod(), now, false);
    } else if (out.next_page_token().empty()) {
      out.set_next_page_token(std::to_string(out.jobs(out.jobs_size() - 1).id()));
    }
  }
  out.set_total(total);
  return Json(out);
}

const core::JobRecord* Engine::Visible(JobId id, const Principal& who) const {
  const core::JobRecord* job = scheduler_->Find(id);
  if (job == nullptr || (!who.admin && job->spec.user.value() != who.user)) return nullptr;
  return job;
}

HttpResponse Engine::JobVerb(const std::string& verb, const HttpRequest& request, JobId id,
                             const Principal& who, TimePoint now) {
  const core::JobRecord* job = Visible(id, who);
  if (job == nullptr) {
    return ErrorResponse(404, "not_found", "no job " + std::to_string(id.value()));
  }
  const std::string& m = request.method;
  auto want = [&](std::string_view method) { return m == method; };
  if (verb.empty() || verb == "events" || verb == "logs" || verb == "progress") {
    if (!want("GET")) return ErrorResponse(405, "method_not_allowed", "use GET");
  } else if (verb == "cancel" || verb == "preempt") {
    if (!want("POST")) return ErrorResponse(405, "method_not_allowed", "use POST");
  } else {
    return ErrorResponse(404, "not_found", "no such resource: " + verb);
  }
  if (verb.empty()) return Json(JobToProto(*job, scheduler_->pod(), now, true));
  if (verb == "events") {
    auto events = repo_.EventsOf(id);
    if (!events) return StatusError(events.error());
    api::JobEventList out;
    for (const auto& e : *events) *out.add_events() = EventToProto(e);
    return Json(out);
  }
  if (verb == "logs") return Logs(ParseTarget(request.target), id);
  if (verb == "progress") return Progress(id);
  if (core::IsTerminal(job->state)) {
    return ErrorResponse(409, "failed_precondition",
                         "job " + std::to_string(id.value()) + " already ended (" +
                             std::string(core::JobStateName(job->state)) + ")");
  }
  auto actions = verb == "cancel" ? scheduler_->Cancel(id, now)
                                  : scheduler_->Preempt(id, "preempted by " + who.user, now);
  if (!actions) return FromStatus(actions.error());
  bus_->Dispatch(*actions);
  if (!repo_.deferred()) DrainBus();
  return Json(JobToProto(*scheduler_->Find(id), scheduler_->pod(), now, true));
}

HttpResponse Engine::Quotas(const HttpRequest& request, const Principal& who, TimePoint now) {
  if (request.method == "PUT") {
    if (!who.admin) return ErrorResponse(403, "permission_denied", "only an admin sets quotas");
    api::Quota in;
    if (Status s = ParseJson(request.body, {config_.limits.max_json_depth, 256}, &in); !s.ok()) {
      return StatusError(s);
    }
    if (in.user().empty() || HasControlCharacters(in.user()) || in.user().size() > 64) {
      return ErrorResponse(400, "invalid_argument", "user must be a name of 1..64 characters");
    }
    if (in.on_demand_cores() < 0 || in.preemptible_cores() < 0) {
      return ErrorResponse(400, "invalid_argument", "quotas must be >= 0 cores");
    }
    core::Quota quota{in.on_demand_cores(), in.preemptible_cores()};
    if (Status s = scheduler_->SetQuota(UserName(in.user()), quota, now); !s.ok()) {
      return FromStatus(s);
    }
  } else if (request.method != "GET") {
    return ErrorResponse(405, "method_not_allowed", "use GET or PUT");
  }
  std::set<std::string> names;
  if (who.admin) {
    for (const auto& u : auth_.users()) names.insert(u.name);
    for (const auto& [user, q] : config_.quotas) names.insert(user);
    for (const auto& [id, job] : scheduler_->jobs()) names.insert(job.spec.user.value());
  } else {
    names.insert(who.user);
  }
  api::QuotaList out;
  for (const auto& name : names) {
    auto* q = out.add_quotas();
    core::Quota quota = scheduler_->QuotaOf(UserName(name));
    core::QuotaUsage used = scheduler_->UsageOf(UserName(name));
    q->set_user(name);
    q->set_on_demand_cores(quota.on_demand_cores);
    q->set_preemptible_cores(quota.preemptible_cores);
    q->set_on_demand_cores_used(used.on_demand_cores);
    q->set_preemptible_cores_used(used.preemptible_cores);
  }
  return Json(out);
}

HttpResponse Engine::Users(const Principal& who) {
  if (!who.admin) return ErrorResponse(403, "permission_denied", "only an admin lists users");
  std::map<std::string, int> active;
  for (const auto& [id, job] : scheduler_->jobs()) {
    if (!core::IsTerminal(job.state)) ++active[job.spec.user.value()];
  }
  api::UserList out;
  for (const auto& u : auth_.users()) {
    auto* user = out.add_users();
    user->set_name(u.name);
    user->set_role(u.admin ? "admin" : "user");
    user->set_active_jobs(active[u.name]);
  }
  return Json(out);
}

HttpResponse Engine::Metrics() const {
  MetricGauges g;
  for (int s = 0; s <= static_cast<int>(core::JobState::kCancelled); ++s) {
    g.jobs_by_state[std::string(core::JobStateName(static_cast<core::JobState>(s)))] = 0;
  }
  for (const auto& [id, job] : scheduler_->jobs()) {
    ++g.jobs_by_state[std::string(core::JobStateName(job.state))];
    if (job.state == core::JobState::kQueued) ++g.queue_length;
    if (core::HoldsHosts(job.state)) {
      (job.spec.preemptible ? g.cores_preemptible : g.cores_on_demand) += scheduler_->CoresOf(job);
    }
  }
  g.stream_clients = static_cast<int64_t>(streams_.size());
  g.scheduler_passes = scheduler_->stats().passes;
  BusGauges b;
  b.received = bus_->received();
  b.sent = bus_->sent();
  b.dropped = bus_->dropped();
  b.agents_connected = bus_->connected_agents();
  b.hosts_unhealthy = bus_->unhealthy_hosts();
  if (bus_io_) {
    BusIoCounters io = bus_io_();
    b.unroutable = io.unroutable;
    b.rejected_keys = io.rejected_keys;
  }
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = metrics_.Format(g) + FormatBusMetrics(b);
  return r;
}

HttpResponse Engine::Agents(const Principal& who, TimePoint now) const {
  if (!who.admin) return ErrorResponse(403, "permission_denied", "only an admin lists agents");
  api::AgentList out;
  for (const auto& [id, a] : bus_->agents()) {
    auto* agent = out.add_agents();
    agent->set_agent_id(id);
    agent->set_pod(a.pod);
    for (HostId h : a.hosts) agent->add_hosts(h.value());
    agent->set_address(a.rsh_endpoint);
    agent->set_connected(a.connected);
    agent->set_last_heartbeat_ms_ago(
        std::chrono::duration_cast<std::chrono::milliseconds>(now - a.last_heard).count());
    for (JobEpoch je : a.running) agent->add_running_jobs(je.job.value());
  }
  return Json(out);
}

HttpResponse Engine::Logs(const ParsedTarget& target, JobId id) const {
  int64_t since = 0;
  int64_t limit = 64 << 10;
  if (auto it = target.query.find("since"); it != target.query.end() && !it->second.empty()) {
    auto n = ParseInt(it->second);
    if (!n || *n < 0) {
      return ErrorResponse(400, "invalid_argument", "since must be a byte offset >= 0");
    }
    since = *n;
  }
  if (auto it = target.query.find("limit"); it != target.query.end() && !it->second.empty()) {
    auto n = ParseInt(it->second);
    if (!n || *n < 1 || *n > int64_t{LogTail::kMaxBytes}) {
      return ErrorResponse(400, "invalid_argument",
                           "limit must be 1.." + std::to_string(LogTail::kMaxBytes) + " bytes");
    }
    limit = *n;
  }
  api::LogList out;
  const LogTail* tail = bus_->LogsOf(id);
  if (tail == nullptr) {
    out.set_note("no output yet (podworker sends the output of a running job)");
    out.set_next_offset(since == 0 ? 0 : since);
    return Json(out);
  }
  LogTail::Page page = tail->Read(since, static_cast<size_t>(limit));
  for (const OutputLine* line : page.lines) {
    auto* l = out.add_lines();
    l->set_time(Rfc3339(line->time));
    l->set_rank(line->rank);
    l->set_text(line->text);
  }
  out.set_next_offset(page.next_offset);
  out.set_truncated(page.truncated);
  if (page.truncated) out.set_note("older output was dropped (the server keeps the last 1 MiB)");
  return Json(out);
}

HttpResponse Engine::Progress(JobId id) const {
  api::ProgressList out;
  if (const ProgressSeries* series = bus_->ProgressOf(id)) {
    for (const ProgressSample& p : series->points()) *out.add_points() = ProgressToProto(p);
  }
  return Json(out);
}

std::variant<int64_t, HttpResponse> Engine::OpenStream(const HttpRequest& request, TimePoint now,
                                                       SendFrame send) {
  // Browsers' EventSource cannot set headers: the stream also takes ?access_token=TOKEN, or the
  // dashboard's session cookie.
  HttpRequest authed = request;
  if (authed.authorization.empty()) {
    ParsedTarget target = ParseTarget(request.target);
    if (auto it = target.query.find("access_token"); it != target.query.end()) {
      authed.authorization = "Bearer " + it->second;
    }
  }
  auto who = AuthenticateRequest(authed, auth_, sessions_, now);
  HttpResponse error;
  if (!who) {
    error = StatusError(who.error());
  } else if (!limiter_.Allow(who->who.user, now)) {
    error = ErrorResponse(429, "resource_exhausted", "rate limit exceeded; retry later");
  } else if (streams_.size() >= static_cast<size_t>(config_.limits.max_stream_clients)) {
    error = ErrorResponse(503, "unavailable", "too many open event streams");
  } else if (request.method != "GET") {
    error = ErrorResponse(405, "method_not_allowed", "use GET");
  }
  metrics_.CountRequest(error.body.empty() ? 200 : error.status);
  if (!error.body.empty()) return error;
  int64_t id = next_stream_++;
  streams_[id] = Stream{who->who, std::move(send)};
  return id;
}

void Engine::CloseStream(int64_t stream) { streams_.erase(stream); }

void Engine::Tick(TimePoint now) {
  Check(bus_->OnTimer(now));
  if (bus_->reconciling() || fatal_) {  // no pass until the agents told us what runs
    if (!repo_.deferred()) DrainBus();
    Publish(now);
    return;
  }
  bool pass = scheduler_->dirty();
  auto start = std::chrono::steady_clock::now();  // latency measurement only
  bus_->Dispatch(scheduler_->Tick(now));
  if (!repo_.deferred()) DrainBus();
  if (pass) {
    metrics_.ObservePass(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  Publish(now);
}

void Engine::Publish(TimePoint now) {
  for (const auto& [job_id, sample] : bus_->TakeDueProgress(now)) {
    const core::JobRecord* job = scheduler_->Find(job_id);
    if (job == nullptr || streams_.empty()) continue;
    api::StreamEvent se;
    se.set_id(next_stream_event_id_++);
    se.set_type("progress");
    *se.mutable_job() = JobToProto(*job, scheduler_->pod(), now, false);
    *se.mutable_progress() = ProgressToProto(sample);
    std::string frame =
        "id: " + std::to_string(se.id()) + "\nevent: progress\ndata: " + ToJson(se) + "\n\n";
    for (auto& [id, stream] : streams_) {
      if (stream.who.admin || stream.who.user == job->spec.user.value()) stream.send(frame);
    }
  }
  for (const core::JobEvent& e : repo_.TakeEvents()) {
    if (e.to == core::JobState::kPreempting) {
      if (auto cause = PreemptionCause(e.reason); !cause.empty()) metrics_.CountPreemption(cause);
      history_.CountPreemption(e.time);
    }
    const core::JobRecord* job = scheduler_->Find(e.job);
    if (job == nullptr) continue;
    api::StreamEvent se;
    se.set_id(next_stream_event_id_++);
    se.set_type("job");
    *se.mutable_event() = EventToProto(e);
    *se.mutable_job() = JobToProto(*job, scheduler_->pod(), now, false);
    if (streams_.empty()) continue;
    std::string frame =
        "id: " + std::to_string(se.id()) + "\nevent: job\ndata: " + ToJson(se) + "\n\n";
    for (auto& [id, stream] : streams_) {
      if (stream.who.admin || stream.who.user == job->spec.user.value()) stream.send(frame);
    }
  }
  history_.Observe(*scheduler_, now);  // at most one sample per interval
}

}  // namespace podsched::daemon
