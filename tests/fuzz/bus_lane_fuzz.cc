// The lane podsched's bus thread gives an agent's message from its field tags alone, before any
// parse (scheduler/daemon/bus_inbox.h: LaneOf). Bytes from any enrolled agent. Besides never
// crashing, the invariant: a message that parses as an Envelope goes to the lane of its body, so
// a Register, Heartbeat or Exited is never dropped as flood (data lane) and a Log or Progress
// never takes the control lane's room.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bus.pb.h"
#include "scheduler/daemon/bus_inbox.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  using podsched::daemon::BusLane;
  const BusLane lane = podsched::daemon::LaneOf(bytes);
  podsched::bus::Envelope env;
  if (env.ParseFromArray(data, static_cast<int>(size))) {
    using E = podsched::bus::Envelope;
    const bool control = env.body_case() == E::kRegister || env.body_case() == E::kHeartbeat ||
                         env.body_case() == E::kExited;
    if (control != (lane == BusLane::kControl)) __builtin_trap();
  }
  return 0;
}
