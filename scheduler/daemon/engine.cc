#include "scheduler/daemon/engine.h"

#include <chrono>

#include "scheduler/daemon/api_routes.h"

namespace podsched::daemon {

// The only way handlers change state. A store failure makes the engine fatal here, so that no
// handler can forget it.
class Engine::Calls final : public ApiCalls {
 public:
  explicit Calls(Engine* engine) : e_(*engine) {}

  Result<JobId> Submit(core::JobSpec spec, TimePoint now) override {
    auto id = e_.scheduler_->Submit(std::move(spec), now);
    if (!id) MarkStoreFailure(id.error());
    return id;
  }
  Result<std::vector<JobId>> SubmitArray(core::JobSpec spec, const core::ArraySpec& array,
                                         TimePoint now) override {
    auto ids = e_.scheduler_->SubmitArray(std::move(spec), array, now);
    if (!ids) MarkStoreFailure(ids.error());
    return ids;
  }
  Status Cancel(JobId job, TimePoint now) override {
    return Stopped(e_.scheduler_->Cancel(job, now));
  }
  Status CancelArray(JobId array, TimePoint now) override {
    return Stopped(e_.scheduler_->CancelArray(array, now));
  }
  Status Preempt(JobId job, std::string reason, TimePoint now) override {
    return Stopped(e_.scheduler_->Preempt(job, std::move(reason), now));
  }
  Status SetQuota(const UserName& user, core::Quota quota, TimePoint now) override {
    return Checked(e_.scheduler_->SetQuota(user, quota, now));
  }
  Result<std::vector<core::JobEvent>> EventsOf(JobId job) override {
    return e_.repo_.EventsOf(job);
  }
  WebSessions& sessions() override { return e_.sessions_; }
  Result<IssuedToken> AddUser(std::string_view name, bool admin, std::string_view unix_user,
                              const std::string& by, TimePoint now) override {
    return e_.accounts_.AddUser(name, admin, unix_user, by, now);
  }
  Result<core::UserAccount> SetUserDisabled(std::string_view name, bool disabled,
                                            TimePoint now) override {
    auto user = e_.accounts_.SetDisabled(name, disabled);
    if (user) e_.EndInvalidCredentials(now, /*sessions=*/true);
    return user;
  }
  Result<IssuedToken> CreateToken(std::string_view user, std::string_view label,
                                  std::optional<Duration> lifetime, const std::string& by,
                                  core::TokenId parent, TimePoint now) override {
    return e_.accounts_.CreateToken(user, label, lifetime, by, now, parent);
  }
  Result<core::TokenRecord> RevokeToken(core::TokenId id, TimePoint now) override {
    auto token = e_.accounts_.Revoke(id, now);
    if (token) e_.EndInvalidCredentials(now, /*sessions=*/true);
    return token;
  }

 private:
  void MarkStoreFailure(const Status& s) {
    if (IsStoreFailure(s)) e_.fatal_ = true;
  }
  Status Checked(Status s) {
    MarkStoreFailure(s);
    return s;
  }
  Status Stopped(Result<core::Actions> actions) {
    if (!actions) return Checked(actions.error());
    e_.Dispatch(*actions);
    return Status::Ok();
  }

  Engine& e_;
};

Engine::Engine(const Config& config, std::vector<UserConfig> users, core::JobRepository* repo,
               BufferingRepository::CommitAll commit_all, core::AccountRepository* accounts)
    : config_(config),
      own_accounts_(accounts == nullptr ? std::make_unique<core::InMemoryAccountRepository>()
                                        : nullptr),
      accounts_(std::move(users), accounts != nullptr ? accounts : own_accounts_.get()),
      limiter_(config.limits.requests_per_second, config.limits.burst),
      web_(config.web_root),
      repo_(repo, std::move(commit_all)),
      router_(ApiRouter()),
      calls_(std::make_unique<Calls>(this)) {}

Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::Create(const Config& config, std::vector<UserConfig> users,
                                               core::JobRepository* repo, TimePoint now,
                                               bool group_commit,
                                               BufferingRepository::CommitAll commit_all,
                                               core::AccountRepository* accounts) {
  auto fleet = pod::Fleet::Create(config.pods);
  if (!fleet) return std::unexpected(fleet.error().WithContext("pods"));
  std::unique_ptr<Engine> engine(
      new Engine(config, std::move(users), repo, std::move(commit_all), accounts));
  auto shadowed = engine->accounts_.Load();
  if (!shadowed) return std::unexpected(shadowed.error());
  engine->shadowed_users_ = std::move(*shadowed);
  CheckpointStores stores(DefaultCheckpointUrl(config), config.zone_checkpoint_urls);
  core::SchedulerConfig scheduler_config = config.scheduler;
  scheduler_config.choose_checkpoint_store = [stores](const core::JobSpec& spec,
                                                      std::string_view zone) {
    return stores.Choose(spec, zone);
  };
  auto scheduler =
      core::Scheduler::Create(std::move(*fleet), std::move(scheduler_config), &engine->repo_, now);
  if (!scheduler) return std::unexpected(scheduler.error());
  engine->scheduler_ = std::move(*scheduler);
  BusLogic::Options bus;
  bus.bus = config.bus;
  bus.checkpoint_stores = std::move(stores);
  bus.log_url = DefaultLogUrl(config);
  bus.scheduler_id = NewToken().substr(0, 16);
  // Configured users' unix_user and those of users made through the API (podctl admin user add
  // --unix-user), as they are at launch time; the API name when none is set.
  bus.unix_user_of = [accounts = &engine->accounts_](const UserName& user) {
    const AccountView* u = accounts->FindUser(user.value());
    return u != nullptr && !u->account.unix_user.empty() ? u->account.unix_user : user.value();
  };
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
  engine->repo_.TakeCommittedJobs();
  engine->snapshot_builder_ = std::make_unique<JobSnapshotBuilder>(engine->scheduler_->fleet());
  for (const auto& [id, job] : engine->scheduler_->jobs()) {
    engine->snapshot_builder_->Upsert(job, engine->TypeCopy(id));
  }
  engine->snapshot_ = engine->snapshot_builder_->Publish();
  engine->forgotten_seen_ = engine->scheduler_->stats().forgotten;
  engine->repo_.set_deferred(group_commit);
  return engine;
}

Status Engine::Flush(TimePoint now, bool publish) {
  Status s = repo_.Flush();
  if (!s.ok()) {
    fatal_ = true;
    return s;
  }
  UpdateSnapshot();
  if (!fatal_) DrainBus();
  if (publish) Publish(now);
  return s;
}

std::optional<pod::AcceleratorType> Engine::TypeCopy(JobId job) const {
  const pod::AcceleratorType* type = scheduler_->TypeOf(job);
  return type != nullptr ? std::optional(*type) : std::nullopt;
}

void Engine::UpdateSnapshot() {
  for (const core::StoreBatch& batch : repo_.TakeCommittedJobs()) {
    for (const core::JobRecord& job : batch.jobs) snapshot_builder_->Upsert(job, TypeCopy(job.id));
    for (const core::ReasonUpdate& update : batch.reasons) {
      snapshot_builder_->SetReason(update.job, update.reason);
    }
  }
  // Retention forgets ended jobs without a commit: the snapshot drops them when the count moved.
  if (const int64_t forgotten = scheduler_->stats().forgotten; forgotten != forgotten_seen_) {
    forgotten_seen_ = forgotten;
    const auto& jobs = scheduler_->jobs();
    snapshot_builder_->EraseUnless([&jobs](JobId id) { return jobs.contains(id); });
  }
  snapshot_ = snapshot_builder_->Publish();
}

void Engine::Dispatch(const core::Actions& actions) {
  bus_->Dispatch(actions);
  if (!repo_.deferred()) DrainBus();
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

ApiView Engine::View() const {
  return ApiView{.config = config_,
                 .accounts = accounts_,
                 .scheduler = *scheduler_,
                 .bus = *bus_,
                 .history = history_,
                 .web = web_,
                 .metrics = metrics_,
                 .bus_io = bus_io_,
                 .jobs_snapshot = snapshot_,
                 .stream_clients = static_cast<int64_t>(streams_.size()),
                 .fatal = fatal_};
}

std::expected<Principal, HttpResponse> Engine::Admit(const HttpRequest& request, TimePoint now) {
  auto who = AuthenticateRequest(request, accounts_, sessions_, now);
  if (!who) {
    metrics_.CountAuthFailure(AuthFailureName(who.error().reason));
    return std::unexpected(StatusError(who.error().status));
  }
  if (!limiter_.Allow(who->who.user, now)) {
    HttpResponse r =
        ErrorResponse(429, "resource_exhausted",
                      "rate limit of " + std::to_string(int(config_.limits.requests_per_second)) +
                          " requests/s per token exceeded; retry later");
    r.headers.emplace_back("Retry-After", "1");
    return std::unexpected(std::move(r));
  }
  return who->who;
}

ApiAnswer Engine::Answer(const HttpRequest& request, TimePoint now) {
  ApiAnswer answer = Serve(request, now);
  const auto* response = std::get_if<HttpResponse>(&answer);
  metrics_.CountRequest(response != nullptr ? response->status : 200);
  Publish(now);
  return answer;
}

HttpResponse Engine::Handle(const HttpRequest& request, TimePoint now) {
  ApiAnswer answer = Answer(request, now);
  if (auto* read = std::get_if<SnapshotRead>(&answer)) return (*read)();
  return std::move(std::get<HttpResponse>(answer));
}

ApiAnswer Engine::Serve(const HttpRequest& request, TimePoint now) {
  const ParsedTarget target = ParseTarget(request.target);
  RouteMatch match = router_.Match(request.method, target.path);
  const bool needs_user =
      match.route != nullptr ? match.route->access == Access::kUser : match.needs_auth;
  Principal who;
  if (needs_user) {
    auto admitted = Admit(request, now);
    if (!admitted) return std::move(admitted.error());
    who = std::move(*admitted);
  }
  if (match.route == nullptr) return std::move(match.error);
  const ApiRequest api_request{request, target, std::move(match.params), now};
  if (match.route->reader != nullptr) return match.route->reader(View(), who, api_request);
  return match.route->handler(View(), *calls_, who, api_request);
}

std::variant<int64_t, HttpResponse> Engine::OpenStream(const HttpRequest& request, TimePoint now,
                                                       SendFrame send) {
  // Browsers' EventSource cannot set headers: the dashboard's stream is authenticated by its
  // session cookie. A token in the URL is refused (audit L5): URLs end up in access logs, proxy
  // logs and browser history.
  if (ParseTarget(request.target).query.contains("access_token")) {
    metrics_.CountRequest(400);
    return ErrorResponse(400, "invalid_argument",
                         "a token in the URL (access_token) is not accepted: URLs end up in logs "
                         "and browser history; send the header 'Authorization: Bearer TOKEN', or "
                         "log in to the dashboard, whose cookie opens the stream");
  }
  auto who = Admit(request, now);
  HttpResponse error;
  if (!who) {
    error = std::move(who.error());
  } else if (streams_.size() >= static_cast<size_t>(config_.limits.max_stream_clients)) {
    error = ErrorResponse(503, "unavailable", "too many open event streams");
  } else if (streams_.CountOf(who->user) >= EventStreams::kMaxPerUser) {
    error = ErrorResponse(429, "resource_exhausted",
                          "user " + who->user + " has " + std::to_string(EventStreams::kMaxPerUser) +
                              " event streams open, the most one user may: close one first");
  } else if (request.method != "GET") {
    error = ErrorResponse(405, "method_not_allowed", "use GET");
  }
  metrics_.CountRequest(error.body.empty() ? 200 : error.status);
  if (!error.body.empty()) return error;
  // Opened by the cookie (no Authorization header): the stream ends with that session.
  std::string session;
  if (request.authorization.empty()) {
    session = CookieValue(request.cookie, kSessionCookie).value_or("");
  }
  return streams_.Open(*who, std::move(send), std::move(session));
}

void Engine::EndInvalidCredentials(TimePoint now, bool sessions) {
  auto invalid = [this, now](const Principal& who) -> std::optional<std::string> {
    auto still = accounts_.Recheck(who, now);
    if (still) return std::nullopt;
    return still.error().status.message();
  };
  streams_.CloseWhere([&](const Principal& who,
                          const std::string& session) -> std::optional<std::string> {
    if (auto why = invalid(who)) return why;
    if (!session.empty() && !sessions_.Find(session, now)) {
      return std::string("the dashboard session this stream was opened with ended (logged out "
                         "or expired)");
    }
    return std::nullopt;
  });
  if (sessions) sessions_.RemoveWhere([&invalid](const Principal& who) { return !!invalid(who); });
}

void Engine::Tick(TimePoint now) {
  EndInvalidCredentials(now, /*sessions=*/false);  // expiry (sessions re-check at each request)
  Check(bus_->OnTimer(now));
  if (bus_->reconciling() || fatal_) {  // no pass until the agents told us what runs
    if (!repo_.deferred()) DrainBus();
    Publish(now);
    return;
  }
  bool pass = scheduler_->dirty();
  auto start = std::chrono::steady_clock::now();  // latency measurement only
  Dispatch(scheduler_->Tick(now));
  if (pass) {
    metrics_.ObservePass(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  Publish(now);
}

void Engine::Publish(TimePoint now) {
  UpdateSnapshot();  // without group commit, what the calls since the last one committed
  // The streams show each job as the snapshot has it: the rows committed with the events.
  const JobSnapshot& jobs = *snapshot_;
  for (const auto& [job_id, sample] : bus_->TakeDueProgress(now)) {
    if (const JobSnapshot::Entry* entry = jobs.Find(job_id)) {
      streams_.PublishProgress(sample, entry->job, jobs.fleet(), entry->accelerator(), now);
    }
  }
  for (const core::JobEvent& e : repo_.TakeEvents()) {
    if (e.to == core::JobState::kPreempting) {
      if (auto cause = PreemptionCause(e.reason); !cause.empty()) metrics_.CountPreemption(cause);
      history_.CountPreemption(e.time);
    }
    if (const JobSnapshot::Entry* entry = jobs.Find(e.job)) {
      streams_.PublishTransition(e, entry->job, jobs.fleet(), entry->accelerator(), now);
    }
  }
  history_.Observe(*scheduler_, now);  // at most one sample per interval
}

}  // namespace podsched::daemon
