// What an API handler sees: a read-only view of the daemon, the narrow set of calls that change
// state, the authenticated caller and the request (its target parsed once).
//
// A handler is a plain function of those (the route table in api_routes.h names them). It runs on
// the scheduler thread, inside Engine::Handle; it must not keep any of the references it gets.
//
// A reader (ApiReader) is a handler for a read that the job snapshot can serve: it checks the
// request on the scheduler thread and answers at once (an error, or what only the scheduler
// thread can read), or returns a SnapshotRead that renders the reply on any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/daemon/account_registry.h"
#include "scheduler/daemon/auth.h"
#include "scheduler/daemon/bus_logic.h"
#include "scheduler/daemon/config.h"
#include "scheduler/daemon/http_types.h"
#include "scheduler/daemon/job_snapshot.h"
#include "scheduler/daemon/metrics.h"
#include "scheduler/daemon/usage_history.h"
#include "scheduler/daemon/web_assets.h"
#include "scheduler/daemon/web_session.h"

namespace podsched::daemon {

// Counters kept by the bus thread (read at scrape time).
struct BusIoCounters {
  int64_t unroutable = 0;     // messages to an agent the ROUTER does not know (any more)
  int64_t rejected_keys = 0;  // CURVE handshakes refused by the ZAP handler
  // Messages dropped: an enrolled key used under another agent id, or a key since revoked.
  int64_t rejected_agent_ids = 0;
  // Messages to an agent not sent: its route's key is not (any more) enrolled for it.
  int64_t unbound_routes = 0;
  // Dropped before the scheduler thread (Daemon's BusInbox): Log/Progress over their agent's or
  // the global budget; control messages only when the scheduler thread stopped taking them.
  int64_t overloaded = 0;
  int64_t control_overloaded = 0;
};

// The daemon's state as handlers may read it.
struct ApiView {
  const Config& config;
  const AccountRegistry& accounts;  // users and tokens
  const core::Scheduler& scheduler;
  const BusLogic& bus;
  const UsageHistory& history;  // GET /api/v1/stats
  const WebAssets& web;         // the dashboard's files
  const Metrics& metrics;
  const std::function<BusIoCounters()>& bus_io;  // empty: no bus thread (tests)
  // The jobs as of the last commit (job_snapshot.h), for SnapshotReads to capture.
  const std::shared_ptr<const JobSnapshot>& jobs_snapshot;
  int64_t stream_clients = 0;
  bool fatal = false;  // a commit failed (GET /healthz)
};

// Every call of a handler that changes state. Errors are the core's; a store failure (see
// IsStoreFailure) has already made the engine fatal when the call returns, and CoreError turns
// it into the 503 the client gets.
class ApiCalls {
 public:
  virtual ~ApiCalls() = default;
  virtual Result<JobId> Submit(core::JobSpec spec, TimePoint now) = 0;
  // One job per index, in one store batch (Scheduler::SubmitArray); the ids in index order.
  virtual Result<std::vector<JobId>> SubmitArray(core::JobSpec spec, const core::ArraySpec& array,
                                                 TimePoint now) = 0;
  // Cancel and Preempt hand the core's actions to the bus.
  virtual Status Cancel(JobId job, TimePoint now) = 0;
  virtual Status CancelArray(JobId array, TimePoint now) = 0;
  virtual Status Preempt(JobId job, std::string reason, TimePoint now) = 0;
  virtual Status SetQuota(const UserName& user, core::Quota quota, TimePoint now) = 0;
  // A job's history from the store; what the caller has seen is included (pending group-commit
  // batches are flushed first).
  virtual Result<std::vector<core::JobEvent>> EventsOf(JobId job) = 0;
  // The dashboard's cookie sessions (login, logout).
  virtual WebSessions& sessions() = 0;
  // Users and tokens (AccountRegistry, same errors). A change takes effect at once: the sessions
  // and event streams whose credential it invalidates are ended before the call returns.
  virtual Result<IssuedToken> AddUser(std::string_view name, bool admin,
                                      std::string_view unix_user, const std::string& by,
                                      TimePoint now) = 0;
  virtual Result<core::UserAccount> SetUserDisabled(std::string_view name, bool disabled,
                                                    TimePoint now) = 0;
  // `parent`: the stored token the caller presented (0: a configured one).
  virtual Result<IssuedToken> CreateToken(std::string_view user, std::string_view label,
                                          std::optional<Duration> lifetime, const std::string& by,
                                          core::TokenId parent, TimePoint now) = 0;
  virtual Result<core::TokenRecord> RevokeToken(core::TokenId id, TimePoint now) = 0;
};

struct ApiRequest {
  const HttpRequest& http;
  const ParsedTarget& target;       // ParseTarget(http.target), parsed once per request
  std::vector<std::string> params;  // the route pattern's {...} segments, in order
  TimePoint now;

  // The query parameter `key`, or nullptr when absent.
  const std::string* Query(const std::string& key) const {
    auto it = target.query.find(key);
    return it == target.query.end() ? nullptr : &it->second;
  }
  // Same, but an empty value counts as absent.
  const std::string* NonEmptyQuery(const std::string& key) const {
    const std::string* v = Query(key);
    return v != nullptr && !v->empty() ? v : nullptr;
  }
};

// `who` is empty for routes that need no authentication.
using ApiHandler = HttpResponse (*)(const ApiView& view, ApiCalls& calls, const Principal& who,
                                    const ApiRequest& request);

// A reply rendered off the scheduler thread: it owns everything it reads (a JobSnapshot among
// it, never the view), may run on any thread, and renders a 200.
using SnapshotRead = std::function<HttpResponse()>;
// A reader's answer: the reply now, or the read that renders it.
using ApiAnswer = std::variant<HttpResponse, SnapshotRead>;
using ApiReader = ApiAnswer (*)(const ApiView& view, const Principal& who,
                                const ApiRequest& request);

}  // namespace podsched::daemon
