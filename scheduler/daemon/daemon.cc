#include "scheduler/daemon/daemon.h"

#include <boost/asio/post.hpp>

#include <algorithm>

namespace podsched::daemon {

namespace asio = boost::asio;

Daemon::Daemon(std::unique_ptr<Engine> engine, const Clock* clock, std::chrono::milliseconds tick,
               std::function<void()> on_fatal)
    : engine_(std::move(engine)),
      clock_(clock),
      tick_(tick),
      on_fatal_(std::move(on_fatal)),
      work_(io_.get_executor()),
      timer_(io_),
      readers_(ReaderThreads()) {
  asio::post(io_, [this] { TickNow(); });
  thread_ = std::thread([this] { io_.run(); });
}

Daemon::~Daemon() { Stop(); }

unsigned Daemon::ReaderThreads() { return std::clamp(std::thread::hardware_concurrency(), 2u, 8u); }

void Daemon::Stop() {
  if (thread_.joinable()) {
    asio::post(io_, [this] {
      if (!held_.empty()) Flush();  // requests already handled become durable and are answered
      timer_.cancel();
      work_.reset();
      io_.stop();
    });
    thread_.join();
  }
  readers_.join();
}

void Daemon::ScheduleTick(std::chrono::milliseconds after) {
  timer_.expires_after(after);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // rescheduled or stopped
    tick_soon_ = false;
    TickNow();
  });
}

void Daemon::TickNow() {
  // What the agents sent while this thread was busy is read before the tick judges who went
  // silent: a commit held up past the heartbeat timeout (a slow disk) otherwise declared every
  // agent lost, and requeued their jobs, with their heartbeats waiting in the inbox (seen in a
  // CI run on a loaded machine). A posted TakeBusTurn then finds an empty turn.
  for (BusInbox::Message& m : bus_inbox_.TakeAll()) Deliver(m);
  const bool pass = engine_->dirty();
  const auto start = std::chrono::steady_clock::now();  // the pass's cost, not a time of day
  engine_->Tick(clock_->Now());
  if (pass) last_pass_ = std::chrono::steady_clock::now() - start;
  (void)engine_->Flush(clock_->Now());  // failure -> fatal(), reported by AfterCall
  AfterCall();
  if (!tick_soon_) ScheduleTick(tick_);
}

void Daemon::Deliver(const BusInbox::Message& m) {
  if (m.well_framed) {
    engine_->OnBusMessage(m.agent_id, m.bytes, clock_->Now());
  } else {
    engine_->OnBusMalformed();
  }
}

void Daemon::AfterCall() {
  if (engine_->fatal() && !fatal_reported_) {
    fatal_reported_ = true;
    on_fatal_();
  }
  // A call that changed something gets its scheduling pass now rather than at the next period;
  // a short delay merges a burst of submissions into one pass.
  // The delay is at least twice the last pass, so that passes over a long queue take at most a
  // third of this thread while requests keep coming (each pass then takes more of them in).
  if (engine_->dirty() && !tick_soon_) {
    tick_soon_ = true;
    const auto twice_last = std::chrono::ceil<std::chrono::milliseconds>(2 * last_pass_);
    ScheduleTick(std::clamp(twice_last, std::chrono::milliseconds(5), tick_));
  }
}

void Daemon::Handle(HttpRequest request, Respond respond) {
  asio::post(io_, [this, request = std::move(request), respond = std::move(respond)] {
    ApiAnswer answer = engine_->Answer(request, clock_->Now());
    if (auto* read = std::get_if<SnapshotRead>(&answer)) {
      asio::post(readers_, [read = std::move(*read), respond] { respond(read()); });
      AfterCall();
      return;
    }
    held_.emplace_back(respond, std::move(std::get<HttpResponse>(answer)));
    PostFlush();
  });
}

void Daemon::PostFlush() {
  if (!flush_posted_) {
    flush_posted_ = true;
    asio::post(io_, [this] { Flush(); });
  }
}

void Daemon::PostBusMessage(std::string agent_id, std::string bytes, bool well_framed) {
  bool wake = false;
  if (!bus_inbox_.Push({std::move(agent_id), std::move(bytes), well_framed}, &wake)) return;
  if (wake) asio::post(io_, [this] { TakeBusTurn(); });
}

void Daemon::TakeBusTurn() {
  std::vector<BusInbox::Message> turn = bus_inbox_.TakeTurn();
  if (turn.empty()) return;
  for (const BusInbox::Message& m : turn) Deliver(m);
  // A turn of heartbeats shares one commit, and Acks/Launches go out after it.
  PostFlush();
  asio::post(io_, [this] { TakeBusTurn(); });
}

void Daemon::Flush() {
  flush_posted_ = false;
  Status s = engine_->Flush(clock_->Now(), /*publish=*/false);
  for (auto& [respond, response] : held_) {
    if (s.ok()) {
      respond(std::move(response));
    } else {
      respond(ErrorResponse(503, "unavailable", "the job store failed: " + s.message()));
    }
  }
  held_.clear();
  if (s.ok()) engine_->Publish(clock_->Now());  // after the replies: see Engine::Flush
  AfterCall();
}

void Daemon::OpenStream(HttpRequest request, OnFrame frame, OnOpen opened) {
  asio::post(io_, [this, request = std::move(request), frame = std::move(frame),
                   opened = std::move(opened)] {
    opened(engine_->OpenStream(request, clock_->Now(), frame));
  });
}

void Daemon::CloseStream(int64_t id) {
  asio::post(io_, [this, id] { engine_->CloseStream(id); });
}

void Daemon::CountRejected(int status) {
  asio::post(io_, [this, status] { engine_->CountRequest(status); });
}

}  // namespace podsched::daemon
