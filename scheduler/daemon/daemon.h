// Daemon: runs an Engine on its own "scheduler thread" and serves it to the HTTP server.
//
// The scheduler core and the job store are single-owner and the store commits synchronously
// (fsync), so they live on one thread with its own io_context. HTTP sessions on the main
// io_context post each request here and get the response posted back: a slow commit never
// blocks socket I/O, and requests are served in arrival order. A steady timer ticks the engine
// every tick_interval, and soon after any call that left the scheduler dirty: 5 ms, or twice the
// last pass when that is longer (so that passes over a long queue leave the thread to requests).
//
// Group commit (when the engine defers commits): responses are held, and a flush task posted
// behind the requests already queued commits all their changes in one transaction, then
// releases the responses (or 503s if the commit failed). Under load many requests share one
// fsync; an idle request waits for its own.
//
// Reads the job snapshot serves (Engine::Answer returns a SnapshotRead) are rendered on a pool of
// reader threads and answered from there: they see every commit whose replies went out before
// them, cost the scheduler thread only their routing and authentication, and wait for no flush
// (they read only what is durable).
//
// When a commit fails (Engine::fatal) the daemon calls `on_fatal` once; main exits non-zero so
// that a supervisor restarts it and the state is reloaded from the store.
//
// Thread safety: the HttpBackend methods are thread-safe (they post).
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "scheduler/daemon/bus_inbox.h"
#include "scheduler/daemon/engine.h"
#include "scheduler/daemon/http_server.h"

namespace podsched::daemon {

class Daemon final : public HttpBackend {
 public:
  Daemon(std::unique_ptr<Engine> engine, const Clock* clock, std::chrono::milliseconds tick,
         std::function<void()> on_fatal);
  ~Daemon() override;  // stops the threads (pending requests are dropped)

  void Handle(HttpRequest request, Respond respond) override;
  void OpenStream(HttpRequest request, OnFrame frame, OnOpen opened) override;
  void CloseStream(int64_t id) override;
  void CountRejected(int status) override;

  // A message from the worker bus (called on the bus thread). Queued in its lane of the
  // BusInbox, or dropped and counted there (a flood or a stalled store must not let agents
  // fill podsched's memory, nor cost other agents their heartbeats).
  void PostBusMessage(std::string agent_id, std::string bytes, bool well_framed);
  // Bus messages dropped so far: Log/Progress over their budget; control messages (only when
  // the scheduler thread has not taken any for 64 MiB). Thread-safe.
  int64_t bus_overloaded() const { return bus_inbox_.dropped_data(); }
  int64_t bus_control_overloaded() const { return bus_inbox_.dropped_control(); }

  // Stops the scheduler thread after the work queued so far, then the readers after theirs.
  void Stop();

  // Threads rendering snapshot reads: one per core, 2 to 8.
  static unsigned ReaderThreads();

 private:
  void ScheduleTick(std::chrono::milliseconds after);
  // Reads everything in the bus inbox, then the engine's tick and its commit.
  void TickNow();
  // One bus message to the engine.
  void Deliver(const BusInbox::Message& m);
  void AfterCall();
  void Flush();
  void PostFlush();
  // One turn of the bus inbox, then posts itself again behind what else is queued (HTTP
  // requests are served between turns); stops at an empty turn.
  void TakeBusTurn();

  std::unique_ptr<Engine> engine_;
  const Clock* clock_;
  std::chrono::milliseconds tick_;
  std::function<void()> on_fatal_;
  bool fatal_reported_ = false;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::steady_timer timer_;
  bool tick_soon_ = false;
  std::chrono::steady_clock::duration last_pass_{};  // how long the last scheduling pass took
  bool flush_posted_ = false;
  std::vector<std::pair<Respond, HttpResponse>> held_;
  BusInbox bus_inbox_;
  boost::asio::thread_pool readers_;
  std::thread thread_;
};

}  // namespace podsched::daemon
