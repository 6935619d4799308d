// EventStreams: the open Server-Sent Events streams (GET /api/v1/events/stream, docs/api.md
// "Live stream") and the frames published to them.
//
// A frame is `id: N\nevent: job|progress\ndata: <StreamEvent JSON>\n\n`, built once and sent to
// every stream whose principal may see the job (visibility.h). Ids increase by one per frame.
// Every job transition takes an id, whether or not a stream is open; a progress report takes one
// only when at least one stream is open. Nothing is converted to JSON while no stream is open.
//
// A stream whose credential no longer holds (token revoked or expired, user disabled, or the
// dashboard session it was opened with logged out or expired) is ended by CloseWhere: it gets a
// last frame `event: end` whose data is an Error {code, message}, then the empty frame, which
// tells the HTTP server to close the connection (http_server.h).
//
// Not thread-safe: the scheduler thread owns it; `send` runs on that thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "api.pb.h"
#include "common/clock.h"
#include "pod/fleet.h"
#include "scheduler/core/job.h"
#include "scheduler/daemon/auth.h"
#include "scheduler/daemon/job_output.h"

namespace podsched::daemon {

class EventStreams {
 public:
  using SendFrame = std::function<void(std::string frame)>;
  // Why a stream must end (its principal, and the dashboard session id it was opened with, ""
  // for a bearer token); nullopt: it goes on.
  using EndReason =
      std::function<std::optional<std::string>(const Principal&, const std::string& session)>;
  // Streams one user may hold open (audit L5: one user could take every stream of the global
  // limit, limits.max_stream_clients, from everyone else).
  static constexpr size_t kMaxPerUser = 16;

  // A new stream for `who`, opened with dashboard session `session` ("" for a bearer token);
  // returns its id (1, 2, ...).
  int64_t Open(Principal who, SendFrame send, std::string session = "");
  void Close(int64_t stream);
  // Ends every stream for which `why` returns a message: sends it as the `end` frame, then the
  // end of the stream. Returns how many ended.
  size_t CloseWhere(const EndReason& why);
  size_t size() const { return streams_.size(); }
  // Open streams of `user`.
  size_t CountOf(std::string_view user) const;
  bool empty() const { return streams_.empty(); }

  // A committed transition of `job` (as it is `now`) in the fleet `pod`; `type`: its parsed accelerator
  // (Scheduler::TypeOf), for its cost.
  void PublishTransition(const core::JobEvent& event, const core::JobRecord& job,
                         const pod::Fleet& pod, const pod::AcceleratorType* type, TimePoint now);
  // A progress report of `job`.
  void PublishProgress(const ProgressSample& sample, const core::JobRecord& job,
                       const pod::Fleet& pod, const pod::AcceleratorType* type, TimePoint now);

  // The id of the newest frame (0: none yet).
  int64_t last_event_id() const { return next_event_id_ - 1; }

 private:
  struct Stream {
    Principal who;
    SendFrame send;
    std::string session;
  };
  // Sets the event's id, type and job, builds the frame and sends it to the job's viewers.
  void Broadcast(std::string_view type, api::StreamEvent& event, const core::JobRecord& job,
                 const pod::Fleet& pod, const pod::AcceleratorType* accelerator, TimePoint now);

  std::map<int64_t, Stream> streams_;
  int64_t next_stream_ = 1;
  int64_t next_event_id_ = 1;
};

}  // namespace podsched::daemon
