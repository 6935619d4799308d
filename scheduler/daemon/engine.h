// Engine: everything podsched does between the sockets and the job store, without sockets.
//
// It owns the scheduler core, the worker bus's logic and the daemon's API state, and wires them:
// a request is parsed once, routed by the route table (api_routes.h), authenticated and rate
// limited when its route needs a user, and answered by a handler (api_handler.h) that reads a
// view of this state and changes it only through the engine's ApiCalls. After every call, the
// transitions the repository committed are counted (metrics, usage history) and published to the
// event streams (event_streams.h). The daemon calls it from ONE thread (the scheduler thread);
// the HTTP server never touches it directly. Unit tests drive it directly.
//
// After every commit the engine publishes a job snapshot (job_snapshot.h) holding the committed
// rows; reads the snapshot can serve (lists) come back from Answer as a SnapshotRead that the
// daemon renders on other threads.
//
// Without group commit every change the core makes is committed inside the core's call, so when
// Handle returns a 201 for a submission the job is durable (with a SQLite repository). With group
// commit (BufferingRepository) it is durable once Flush returned OK; the daemon holds the
// response until then.
//
// Not thread-safe (single owner).
#pragma once

#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "common/clock.h"
#include "common/status.h"
#include "scheduler/core/accounts.h"
#include "scheduler/core/repository.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/daemon/account_registry.h"
#include "scheduler/daemon/api_handler.h"
#include "scheduler/daemon/api_response.h"
#include "scheduler/daemon/auth.h"
#include "scheduler/daemon/buffering_repository.h"
#include "scheduler/daemon/bus_logic.h"
#include "scheduler/daemon/config.h"
#include "scheduler/daemon/event_streams.h"
#include "scheduler/daemon/http_types.h"
#include "scheduler/daemon/job_snapshot.h"
#include "scheduler/daemon/metrics.h"
#include "scheduler/daemon/router.h"
#include "scheduler/daemon/usage_history.h"
#include "scheduler/daemon/web_assets.h"
#include "scheduler/daemon/web_session.h"

namespace podsched::daemon {

class Engine {
 public:
  using SendFrame = EventStreams::SendFrame;
  using SendBus = std::function<void(BusOutgoing message)>;
  using BusIoCounters = daemon::BusIoCounters;

  // `users` (the configured ones) must include the admin. `repo` must outlive the engine.
  // With `group_commit`, commits are deferred to Flush (see BufferingRepository); `commit_all`
  // commits several batches in one transaction (empty: one by one). `accounts` holds the API's
  // users and tokens (null: kept in memory only); it must outlive the engine. Account changes
  // are committed at once, each in its own transaction, never deferred.
  static Result<std::unique_ptr<Engine>> Create(const Config& config, std::vector<UserConfig> users,
                                                core::JobRepository* repo, TimePoint now,
                                                bool group_commit = false,
                                                BufferingRepository::CommitAll commit_all = {},
                                                core::AccountRepository* accounts = nullptr);
  ~Engine();
  // Group commit: makes every change since the last Flush durable, then (with `publish`)
  // publishes it to the streams. A failure sets fatal(). Without group commit there is nothing
  // to flush. The daemon publishes after it answered the flushed requests (Publish): a
  // 10,000-task array is 10,000 stream frames, which need not delay the submitter's reply.
  Status Flush(TimePoint now, bool publish = true);
  // Counts and streams what was committed since the last call, and streams due progress.
  void Publish(TimePoint now);

  // Any request except the event stream: the reply, or the read that renders it on any thread
  // (counted in the metrics as a 200). Reads see what was committed before the call.
  ApiAnswer Answer(const HttpRequest& request, TimePoint now);
  // The same, with a SnapshotRead rendered here.
  HttpResponse Handle(const HttpRequest& request, TimePoint now);

  // Opens an event stream for an authenticated caller; frames go to `send` (called on this
  // engine's thread). Returns the stream id, or the error response to send instead.
  std::variant<int64_t, HttpResponse> OpenStream(const HttpRequest& request, TimePoint now,
                                                 SendFrame send);
  void CloseStream(int64_t stream) { streams_.Close(stream); }
  // Counts a request the HTTP layer rejected before it reached Handle.
  void CountRequest(int status) { metrics_.CountRequest(status); }

  // Timers and at most one scheduling pass (none while reconciling after a restart); publishes
  // what changed; ends the event streams whose token expired.
  void Tick(TimePoint now);
  bool dirty() const { return scheduler_->dirty() && !bus_->reconciling(); }

  // The worker bus. Messages to agents go to `send` only after the changes that caused them are
  // durable (in Flush, or at once without group commit).
  void SetBusSender(SendBus send) { send_bus_ = std::move(send); }
  // The hosts each agent was enrolled for (BusLogic::SetEnrolledHosts).
  void SetEnrolledHosts(BusLogic::EnrolledHosts lookup) { bus_->SetEnrolledHosts(std::move(lookup)); }
  void OnBusMessage(std::string_view agent_id, std::string_view bytes, TimePoint now);
  void OnBusMalformed() { bus_->CountMalformed(); }
  // Counters kept by the bus thread (read at scrape time).
  void SetBusIoCounters(std::function<BusIoCounters()> read) { bus_io_ = std::move(read); }
  const BusLogic& bus() const { return *bus_; }
  // A commit failed: the core's memory is ahead of the store. The daemon must exit.
  bool fatal() const { return fatal_; }
  const core::Scheduler& scheduler() const { return *scheduler_; }
  int64_t last_stream_id() const { return streams_.last_event_id(); }
  const AccountRegistry& accounts() const { return accounts_; }
  // Stored API users that a configured user of the same name shadows (main warns).
  const std::vector<std::string>& shadowed_users() const { return shadowed_users_; }

 private:
  class Calls;  // the ApiCalls handlers get

  Engine(const Config& config, std::vector<UserConfig> users, core::JobRepository* repo,
         BufferingRepository::CommitAll commit_all, core::AccountRepository* accounts);
  // Authenticates `request` and takes a token from its user's rate limit.
  std::expected<Principal, HttpResponse> Admit(const HttpRequest& request, TimePoint now);
  ApiAnswer Serve(const HttpRequest& request, TimePoint now);
  ApiView View() const;
  // Applies the committed job rows (and the jobs retention forgot) to the snapshot and publishes
  // it. Called after every commit, before its replies are released.
  void UpdateSnapshot();
  // The type the scheduler parsed for `job`, copied (the snapshot outlives the scheduler's).
  std::optional<pod::AcceleratorType> TypeCopy(JobId job) const;
  // Hands the core's actions to the bus (sent at once without group commit).
  void Dispatch(const core::Actions& actions);
  // Sends what the bus logic has queued (after a successful commit).
  void DrainBus();
  // Records a fatal commit failure.
  void Check(const Status& s);
  // Ends the event streams (and, with `sessions`, the dashboard sessions) whose credential no
  // longer holds.
  void EndInvalidCredentials(TimePoint now, bool sessions);

  Config config_;
  std::unique_ptr<core::InMemoryAccountRepository> own_accounts_;  // when none was given
  AccountRegistry accounts_;
  std::vector<std::string> shadowed_users_;
  RateLimiter limiter_;
  WebAssets web_;
  WebSessions sessions_;
  UsageHistory history_;
  BufferingRepository repo_;
  std::unique_ptr<core::Scheduler> scheduler_;
  std::unique_ptr<BusLogic> bus_;
  SendBus send_bus_;
  std::function<BusIoCounters()> bus_io_;
  daemon::Metrics metrics_;
  std::unique_ptr<JobSnapshotBuilder> snapshot_builder_;
  std::shared_ptr<const JobSnapshot> snapshot_;
  int64_t forgotten_seen_ = 0;  // SchedulerStats::forgotten as of the last UpdateSnapshot
  EventStreams streams_;
  const Router router_;
  std::unique_ptr<Calls> calls_;
  bool fatal_ = false;
};

}  // namespace podsched::daemon
