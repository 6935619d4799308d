// When the agent talks on the bus (docs/bus.md, "Conversation"; docs/podworker.md, "Bus"):
// Register until a Welcome (every 2 s, or after 100 ms while the socket is not connected),
// Heartbeat every interval the Welcome gave, Register again on Reregister; and when every send
// has failed for 3 s, a new socket (libzmq does not reconnect after some protocol errors, e.g.
// a message above ZMQ_MAXMSGSIZE).
//
// Pure: the caller passes `now` (a MonotonicClock reading) and does the sending.
// Thread safety: a value owned by one thread.
#pragma once

#include <cstdint>
#include <optional>

#include "common/clock.h"

namespace podsched::agent {

class BusPacer {
 public:
  static constexpr Duration kRegisterRetry = std::chrono::seconds(2);
  static constexpr Duration kRegisterNotConnected = std::chrono::milliseconds(100);
  static constexpr Duration kReconnectAfter = std::chrono::seconds(3);
  static constexpr Duration kDefaultHeartbeat = std::chrono::seconds(1);

  // A Register is due at `now`.
  explicit BusPacer(MonotonicTime now) : next_register_(now) {}

  bool welcomed() const { return welcomed_; }
  bool RegisterDue(MonotonicTime now) const { return !welcomed_ && now >= next_register_; }
  bool HeartbeatDue(MonotonicTime now) const { return welcomed_ && now >= next_heartbeat_; }

  // A Register was sent (`queued`) or could not be queued (not connected yet).
  void RegisterSent(MonotonicTime now, bool queued);
  void HeartbeatSent(MonotonicTime now) { next_heartbeat_ = now + heartbeat_interval_; }
  // A Welcome: heartbeats every `interval_ms` (10..600000, else 1 s), the first at once. true
  // when the agent was not welcomed before.
  bool Welcome(MonotonicTime now, int32_t interval_ms);
  // Reregister: the caller sends a Register now.
  void Reregister() { welcomed_ = false; }

  struct SendOutcome {
    bool reconnect = false;     // open a new socket; a Register is due now
    bool outage_began = false;  // first reconnect since the last successful send (warn once)
    bool recovered = false;     // a send succeeded after an outage was reported
  };
  // The result of one send.
  SendOutcome SendResult(MonotonicTime now, bool sent);

  Duration heartbeat_interval() const { return heartbeat_interval_; }

 private:
  bool welcomed_ = false;
  Duration heartbeat_interval_ = kDefaultHeartbeat;
  MonotonicTime next_register_, next_heartbeat_{};
  std::optional<MonotonicTime> failing_since_;
  bool outage_reported_ = false;
};

}  // namespace podsched::agent
