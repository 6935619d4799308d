// BusServer: the ZeroMQ side of the worker bus (docs/bus.md "Sockets"). One bus thread owns the
// ROUTER (HANDOVER, MANDATORY, MAXMSGSIZE 1 MiB) and an inproc PULL socket; Send (called from
// ONE other thread, the scheduler thread) pushes [agent_id][bytes] through a PUSH socket to it.
// Each incoming message is handed to `on_message` ON THE BUS THREAD (the daemon posts it to the
// scheduler thread). With a CURVE secret key the ROUTER is a CURVE server and a ZAP handler on
// the bus thread admits only the listed agent public keys.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "common/status.h"
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

 private:
  BusServer() = default;
  void Loop();
  void ServeZap();

  zmq::context_t context_;
  zmq::socket_t router_;
  zmq::socket_t pull_;
  zmq::socket_t push_;
  zmq::socket_t zap_;
  bool curve_ = false;
  std::vector<std::string> agent_keys_;  // 32-byte binary public keys
  std::string endpoint_;
  OnMessage on_message_;
  std::atomic<int64_t> unroutable_{0};
  std::atomic<int64_t> rejected_keys_{0};
  std::thread thread_;
};

}  // namespace podsched::daemon
