#include "worker/agent/bus_pacer.h"

namespace podsched::agent {

void BusPacer::RegisterSent(MonotonicTime now, bool queued) {
  // Not connected yet (ZMQ_IMMEDIATE): try again soon rather than after the full retry period.
  next_register_ = now + (queued ? kRegisterRetry : kRegisterNotConnected);
}

bool BusPacer::Welcome(MonotonicTime now, int32_t interval_ms) {
  heartbeat_interval_ = interval_ms >= 10 && interval_ms <= 600000
                            ? Duration(std::chrono::milliseconds(interval_ms))
                            : kDefaultHeartbeat;
  const bool first = !welcomed_;
  welcomed_ = true;
  next_heartbeat_ = now;
  return first;
}

BusPacer::SendOutcome BusPacer::SendResult(MonotonicTime now, bool sent) {
  SendOutcome out;
  if (sent) {
    out.recovered = outage_reported_;
    outage_reported_ = false;
    failing_since_.reset();
    return out;
  }
  if (!failing_since_) failing_since_ = now;
  if (now - *failing_since_ > kReconnectAfter) {
    out.reconnect = true;
    out.outage_began = !outage_reported_;
    outage_reported_ = true;
    failing_since_.reset();
    welcomed_ = false;
    next_register_ = now;
  }
  return out;
}

}  // namespace podsched::agent
