// BusServer: the ZeroMQ side of the worker bus (docs/bus.md "Sockets"). One bus thread owns the
// ROUTER (HANDOVER, MANDATORY, MAXMSGSIZE 1 MiB) and an inproc PULL socket; Send (called from
// ONE other thread, the scheduler thread) pushes [agent_id][bytes] through a PUSH socket to it.
// Each incoming message is handed to `on_message` ON THE BUS THREAD (the daemon posts it to the
// scheduler thread). With bus.curve the ROUTER is a CURVE server and a ZAP handler on the bus
// thread admits only enrolled keys (bus.agent_keys_file, re-read when it changes) and those of
// bus.curve_agent_keys; any other is refused and counted (rejected_keys). An enrolled key is
// bound to one agent id: the handler gives the connection the User-Id "ID KEY", and a message
// whose routing id does not name ID, or whose key has been revoked since, is dropped
// and counted (rejected_agent_ids) before anything reads it. The hosts each id was enrolled for
// are kept for the scheduler thread (EnrolledHostsOf), which refuses a Register for any other.
// An agent connects as "ID/NONCE" (NewBusRoutingId, common/key_file.h): on_message gets ID.
// Outbound, a message for ID goes to the routing id ID's last accepted message came from, and
// only while the key that message came with is still enrolled for ID (audit L9): after a
// revocation nothing more reaches it (counted: unbound_routes). ROUTER_HANDOVER stays on, so
// that an agent reconnecting with its routing id takes its route back at once; no other
// connection can take that route over, silent or not, as the nonce is sent only inside the
// encrypted CURVE handshake (H6). A bare "ID" routing id (test harnesses) still works.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <thread>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "common/status.h"
#include "scheduler/daemon/agent_keys.h"
#include "scheduler/daemon/config.h"

namespace podsched::daemon {

class BusServer {
 public:
  // `well_framed` false: the message did not have exactly [identity][payload].
  using OnMessage = std::function<void(std::string agent_id, std::string bytes, bool well_framed)>;

  // Binds `address` (tcp://HOST:* for an ephemeral port). Nothing is received before Run.
  static Result<std::unique_ptr<BusServer>> Bind(const std::string& address, const BusConfig& bus);
  ~BusServer();  // stops the bus thread

  void Run(OnMessage on_message);
  // The bound endpoint, with the real port ("tcp://127.0.0.1:40123").
  const std::string& endpoint() const { return endpoint_; }
  // Queues one message to an agent. Not thread-safe: one calling thread.
  void Send(const std::string& agent_id, const std::string& bytes);
  // Messages the ROUTER could not route (agent not connected). Thread-safe.
  int64_t unroutable() const { return unroutable_.load(); }
  int64_t rejected_keys() const { return rejected_keys_.load(); }
  int64_t rejected_agent_ids() const { return rejected_agent_ids_.load(); }
  // Messages not sent: the agent id's route is not (any more) bound to one of its keys.
  int64_t unbound_routes() const { return unbound_routes_.load(); }
  // The hosts `agent_id` was enrolled for (podsched agent enroll --hosts); nullopt when it may
  // register any host: enrolled without --hosts, a configured key, or no CURVE. Thread-safe; as
  // of the agents.keys read that admitted the agent's connection or later.
  std::optional<HostEnrolment> EnrolledHostsOf(const std::string& agent_id) const;

 private:
  BusServer() = default;
  void Loop();
  void ServeZap();
  // Re-reads agent_keys_file when its modification time or size changed (or `force`).
  void ReloadAgentKeys(bool force);
  // The key (Z85, or "*" for a configured key) the message's connection speaks as `agent_id`
  // with; nullopt when it is not (any more) allowed to.
  std::optional<std::string> BoundKey(const zmq::message_t& msg, const std::string& agent_id);
  // Whether a message may go to `agent_id` (CURVE): its route's key is still enrolled for it.
  bool RouteBound(const std::string& agent_id);

  zmq::context_t context_;
  zmq::socket_t router_;
  zmq::socket_t pull_;
  zmq::socket_t push_;
  zmq::socket_t zap_;
  bool curve_ = false;
  std::map<std::string, std::string> config_keys_;    // 32-byte binary key -> Z85 (any id)
  std::map<std::string, std::string> enrolled_;       // 32-byte binary key -> agent id
  std::map<std::string, std::string> enrolled_z85_;   // Z85 key -> agent id
  mutable std::mutex enrolled_hosts_mu_;
  std::map<std::string, HostEnrolment> enrolled_hosts_;  // agent id -> pod, hosts (GUARDED)
  std::string agent_keys_file_;
  std::pair<int64_t, int64_t> agent_keys_stamp_{-1, -1};  // mtime ns, size
  std::chrono::steady_clock::time_point agent_keys_checked_{};
  std::string endpoint_;
  OnMessage on_message_;
  std::atomic<int64_t> unroutable_{0};
  std::atomic<int64_t> rejected_keys_{0};
  std::atomic<int64_t> rejected_agent_ids_{0};
  std::atomic<int64_t> unbound_routes_{0};
  // Bus thread only: agent id -> the routing id and key (Z85, "*" for a configured key) of its
  // last accepted message; without CURVE the key is empty.
  struct Route {
    std::string routing_id;
    std::string key;
  };
  std::map<std::string, Route> routes_;
  std::thread thread_;
};

}  // namespace podsched::daemon
