// BusInbox: agent messages on their way from the bus thread to the scheduler thread, in lanes
// (the audit's H2: one job's output flood filled a single 64 MiB backlog, which then dropped
// the heartbeats and exits of every other agent; those were declared lost and their jobs
// requeued, while the flooding agent's Logs kept it alive).
//
// - Two lanes. Control (Register, Heartbeat, Exited: what keeps agents alive and frees hosts)
//   is admitted up to kMaxControlBytes, which only a stopped scheduler thread reaches. Data
//   (Log, Progress, and whatever cannot be read) is admitted within a budget per agent and a
//   global one: a flood drops only its own agent's data, counted as "overloaded".
// - Turns. The scheduler thread takes each agent's oldest messages, up to kTurnBytes of them
//   per agent per turn, agents in turn. A heartbeat waits behind its own agent's queue only,
//   never behind another's flood; within one agent the order is kept (an Exited never
//   overtakes the last Logs of its job).
//
// Every message is charged its size plus kOverheadBytes, so a flood of tiny messages is
// bounded too.
//
// Thread safety: Push on the bus thread, TakeTurn on the scheduler thread; one mutex.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace podsched::daemon {

enum class BusLane { kControl, kData };

// The lane of a serialized bus Envelope, from its field tags only (no parse of the payload):
// Log and Progress, or anything that is not a well-formed field sequence, are data.
BusLane LaneOf(std::string_view envelope_bytes);

class BusInbox {
 public:
  struct Limits {
    int64_t control_bytes = int64_t{64} << 20;
    int64_t data_bytes = int64_t{64} << 20;
    int64_t data_bytes_per_agent = int64_t{4} << 20;
    int64_t turn_bytes = int64_t{256} << 10;
  };
  static constexpr int64_t kOverheadBytes = 256;  // per message: the queue entry, its strings

  struct Message {
    std::string agent_id;
    std::string bytes;
    bool well_framed = true;  // [identity][payload], as BusServer::OnMessage says
  };

  BusInbox() : BusInbox(Limits{}) {}
  explicit BusInbox(Limits limits) : limits_(limits) {}

  // Queues `m`, or drops and counts it (false). `*wake` is set when the scheduler thread is
  // not taking turns: the caller posts one TakeTurn loop then.
  bool Push(Message m, bool* wake);
  // The next turn, oldest first within each agent. Empty when nothing is queued; the taker
  // then stops, and the next Push wakes it.
  std::vector<Message> TakeTurn();
  // Everything queued now, oldest first within each agent, without turns: for the scheduler
  // thread to read before it judges who went silent (Daemon's tick). Leaves the taker's state
  // alone (a posted taker stops at its next, empty, turn).
  std::vector<Message> TakeAll();

  int64_t dropped_data() const;
  int64_t dropped_control() const;
  int64_t queued_bytes() const;

 private:
  // Each agent's oldest messages up to `bytes_per_agent` (at least one); mu_ held.
  std::vector<Message> TakeLocked(int64_t bytes_per_agent);

  struct Entry {
    Message message;
    BusLane lane;
    int64_t cost;
  };
  struct Queue {
    std::deque<Entry> entries;
    int64_t data_bytes = 0;
  };

  const Limits limits_;
  mutable std::mutex mu_;
  std::map<std::string, Queue> queues_;  // by agent id; an empty queue is erased (GUARDED)
  int64_t control_bytes_ = 0;            // GUARDED
  int64_t data_bytes_ = 0;               // GUARDED
  int64_t dropped_data_ = 0;             // GUARDED
  int64_t dropped_control_ = 0;          // GUARDED
  bool taking_ = false;  // a TakeTurn loop is posted or running (GUARDED)
};

}  // namespace podsched::daemon
