// Engine: everything podsched does between the sockets and the job store, without sockets.
//
// It owns the scheduler core and routes API requests (HttpRequest -> HttpResponse) to it:
// authentication, rate limiting, JSON bounds and conversion, ownership checks (another user's job
// is "not found"), metrics, and the live event stream. The daemon calls it from ONE thread (the
// scheduler thread); the HTTP server never touches it directly. Unit tests drive it directly.
//
// Every change the core makes is committed to the repository inside the core's call, so when
// Handle returns a 201 for a submission the job is durable (with a SQLite repository).
//
// Events: after every call, the transitions the repository committed are published to the open
// streams as Server-Sent Events frames, each with the next stream id (1, 2, ...). A non-admin's
// stream carries only that user's jobs.
//
// Not thread-safe (single owner).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <variant>

#include "common/clock.h"
#include "common/status.h"
#include "scheduler/core/repository.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/daemon/auth.h"
#include "scheduler/daemon/bus_logic.h"
#include "scheduler/daemon/buffering_repository.h"
#include "scheduler/daemon/config.h"
#include "scheduler/daemon/http_types.h"
#include "scheduler/daemon/metrics.h"
#include "scheduler/daemon/usage_history.h"
#include "scheduler/daemon/web_assets.h"
#include "scheduler/daemon/web_session.h"

namespace podsched::daemon {

class Engine {
 public:
  using SendFrame = std::function<void(std::string frame)>;
  using SendBus = std::function<void(BusOutgoing message)>;

  // `users` must include the admin. `repo` must outlive the engine.
  // With `group_commit`, commits are deferred to Flush (see BufferingRepository); `commit_all`
  // commits several batches in one transaction (empty: one by one).
  static Result<std::unique_ptr<Engine>> Create(const Config& config, std::vector<UserConfig> users,
                                                core::JobRepository* repo, TimePoint now,
                                                bool group_commit = false,
                                                BufferingRepository::CommitAll commit_all = {});
  // Group commit: makes every change since the last Flush durable, then publishes it to the
  // streams. A failure sets fatal(). Without group commit there is nothing to flush.
  Status Flush(TimePoint now);

  // Any request except the event stream.
  HttpResponse Handle(const HttpRequest& request, TimePoint now);

  // Opens an event stream for an authenticated caller; frames go to `send` (called on this
  // engine's thread). Returns the stream id, or the error response to send instead.
  std::variant<int64_t, HttpResponse> OpenStream(const HttpRequest& request, TimePoint now,
                                                 SendFrame send);
  void CloseStream(int64_t stream);
  // Counts a request the HTTP layer rejected before it reached Handle.
  void CountRequest(int status) { metrics_.CountRequest(status); }

  // Timers and at most one scheduling pass (none while reconciling after a restart); publishes
  // what changed.
  void Tick(TimePoint now);
  bool dirty() const { return scheduler_->dirty() && !bus_->reconciling(); }

  // The worker bus. Messages to agents go to `send` only after the changes that caused them are
  // durable (in Flush, or at once without group commit).
  void SetBusSender(SendBus send) { send_bus_ = std::move(send); }
  void OnBusMessage(std::string_view agent_id, std::string_view bytes, TimePoint now);
  void OnBusMalformed() { bus_->CountMalformed(); }
  // Counters kept by the bus thread (read at scrape time).
  struct BusIoCounters {
    int64_t unroutable = 0;     // messages to an agent the ROUTER does not know (any more)
    int64_t rejected_keys = 0;  // CURVE handshakes refused by the ZAP handler
  };
  void SetBusIoCounters(std::function<BusIoCounters()> read) { bus_io_ = std::move(read); }
  const BusLogic& bus() const { return *bus_; }
  // A commit failed: the core's memory is ahead of the store. The daemon must exit.
  bool fatal() const { return fatal_; }
  const core::Scheduler& scheduler() const { return *scheduler_; }
  int64_t last_stream_id() const { return next_stream_event_id_ - 1; }

 private:
  Engine(const Config& config, std::vector<UserConfig> users, core::JobRepository* repo,
         BufferingRepository::CommitAll commit_all);
  HttpResponse Route(const HttpRequest& request, const Principal& who, TimePoint now);
  HttpResponse Submit(const HttpRequest& request, const Principal& who, TimePoint now);
  HttpResponse List(const ParsedTarget& target, const Principal& who, TimePoint now);
  HttpResponse JobVerb(const std::string& verb, const HttpRequest& request, JobId id,
                       const Principal& who, TimePoint now);
  HttpResponse Quotas(const HttpRequest& request, const Principal& who, TimePoint now);
  HttpResponse Users(const Principal& who);
  HttpResponse Metrics() const;
  HttpResponse Agents(const Principal& who, TimePoint now) const;
  HttpResponse Logs(const ParsedTarget& target, JobId id) const;
  HttpResponse Progress(JobId id) const;
  // Sends what the bus logic has queued (after a successful commit).
  void DrainBus();
  // Records a fatal commit failure from a bus call.
  void Check(const Status& s);
  // The job if `who` may see it.
  const core::JobRecord* Visible(JobId id, const Principal& who) const;
  // Maps a core error to a response; flags commit failures as fatal.
  HttpResponse FromStatus(const Status& status);
  void Publish(TimePoint now);

  struct Stream {
    Principal who;
    SendFrame send;
  };

  Config config_;
  Authenticator auth_;
  RateLimiter limiter_;
  WebAssets web_;           // the dashboard's files (every path outside /api, /healthz, /metrics)
  WebSessions sessions_;    // its logins (cookie sessions, also accepted by the API)
  UsageHistory history_;    // GET /api/v1/stats
  BufferingRepository repo_;
  std::unique_ptr<core::Scheduler> scheduler_;
  std::unique_ptr<BusLogic> bus_;
  SendBus send_bus_;
  std::function<BusIoCounters()> bus_io_;
  daemon::Metrics metrics_;
  std::map<int64_t, Stream> streams_;
  int64_t next_stream_ = 1;
  int64_t next_stream_event_id_ = 1;
  bool fatal_ = false;
};

// HTTP status for a Status code (invalid_argument -> 400, not_found -> 404, ...).
int HttpStatusOf(StatusCode code);
HttpResponse ErrorResponse(int status, std::string_view code, std::string_view message);

}  // namespace podsched::daemon
