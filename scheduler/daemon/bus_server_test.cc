// BusServer with real ZeroMQ CURVE sockets on loopback: an enrolled agent's route, what a
// revocation does to messages sent to it, and connections of another enrolled agent that try
// to take the route over (audit L9, H6).
#include "scheduler/daemon/bus_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <vector>
#include <chrono>
#include <filesystem>
#include <thread>
#include <zmq.hpp>

#include "common/key_file.h"
#include "scheduler/daemon/agent_keys.h"

namespace podsched::daemon {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

Result<KeyFile> RealKeys() {
  char pub[41] = {}, sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0) return std::unexpected(Status(StatusCode::kInternal, "keypair"));
  KeyFile k;
  k.public_key = pub;
  k.secret_key = sec;
  return k;
}

template <typename F>
bool WaitFor(F done, milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

// A CURVE dealer of `keys` connecting as `routing_id`; its handshake is done (podsched accepted
// the key) when this returns true.
bool ConnectDealer(zmq::context_t& ctx, zmq::socket_t& dealer, const std::string& routing_id,
                   const KeyFile& server, const KeyFile& keys, const std::string& endpoint) {
  static int monitors = 0;
  const std::string monitor = "inproc://bus-server-test-monitor-" + std::to_string(++monitors);
  dealer = zmq::socket_t(ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::routing_id, routing_id);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::curve_serverkey, server.public_key);
  dealer.set(zmq::sockopt::curve_publickey, keys.public_key);
  dealer.set(zmq::sockopt::curve_secretkey, keys.secret_key);
  if (zmq_socket_monitor(dealer.handle(), monitor.c_str(), ZMQ_EVENT_HANDSHAKE_SUCCEEDED) != 0) {
    return false;
  }
  zmq::socket_t events(ctx, zmq::socket_type::pair);
  events.connect(monitor);
  dealer.connect(endpoint);
  zmq::pollitem_t item{events.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, milliseconds(10000));
  zmq::message_t event;
  const bool ok = events.recv(event, zmq::recv_flags::dontwait).has_value();
  zmq_socket_monitor(dealer.handle(), nullptr, 0);
  return ok;
}

std::optional<std::string> Receive(zmq::socket_t& dealer, milliseconds wait) {
  zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, wait);
  zmq::message_t m;
  if (!dealer.recv(m, zmq::recv_flags::dontwait)) return std::nullopt;
  return m.to_string();
}

class BusServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bus-server-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A CURVE bus server with `server_key`, admitting the keys enrolled in dir_.
  Result<std::unique_ptr<BusServer>> CurveServer(const KeyFile& server_key) {
    BusConfig bus;
    bus.curve = true;
    bus.curve_secret_key = server_key.secret_key;
    bus.agent_keys_file = AgentKeysPath(dir_.string());
    return BusServer::Bind("tcp://127.0.0.1:*", bus);
  }
  fs::path dir_;
};

TEST_F(BusServerTest, NothingMoreReachesARevokedAgent) {
  bool created = false;
  auto server_key = LoadOrCreateServerKey(dir_.string(), RealKeys, &created);
  ASSERT_TRUE(server_key.has_value()) << server_key.error().ToString();
  auto agent = EnrollAgent(dir_.string(), "a1", "tcp://127.0.0.1:1", RealKeys);
  ASSERT_TRUE(agent.has_value()) << agent.error().ToString();

  auto server = CurveServer(*server_key);
  ASSERT_TRUE(server.has_value()) << server.error().ToString();
  std::atomic<int> received{0};
  (*server)->Run([&](const std::string& id, const std::string&, bool) {
    if (id == "a1") ++received;
  });

  zmq::context_t ctx;
  zmq::socket_t dealer;
  ASSERT_TRUE(ConnectDealer(ctx, dealer, "a1", *server_key, *agent, (*server)->endpoint()));
  auto receive = [&](milliseconds wait) { return Receive(dealer, wait); };

  // Enrolled: the agent speaks, and what is sent to it arrives.
  dealer.send(zmq::str_buffer("hello"), zmq::send_flags::none);
  ASSERT_TRUE(WaitFor([&] { return received.load() == 1; }, milliseconds(5000)));
  (*server)->Send("a1", "welcome");
  EXPECT_EQ(receive(milliseconds(5000)), "welcome");
  EXPECT_EQ((*server)->unbound_routes(), 0);

  // Revoked: the server notices within its re-read (a second), and from then on sends nothing.
  ASSERT_TRUE(RevokeAgent(dir_.string(), "a1").ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        (*server)->Send("a1", "launch");
        return (*server)->unbound_routes() >= 1;
      },
      milliseconds(10000)));
  while (receive(milliseconds(200))) {  // what left before the re-read
  }
  const int64_t before = (*server)->unbound_routes();
  (*server)->Send("a1", "after");
  ASSERT_TRUE(WaitFor([&] { return (*server)->unbound_routes() > before; }, milliseconds(5000)));
  EXPECT_EQ(receive(milliseconds(0)), std::nullopt) << "a revoked agent still receives";
}

TEST_F(BusServerTest, AnotherAgentsConnectionCannotTakeTheRouteOver) {
  bool created = false;
  auto server_key = LoadOrCreateServerKey(dir_.string(), RealKeys, &created);
  ASSERT_TRUE(server_key.has_value()) << server_key.error().ToString();
  auto a1 = EnrollAgent(dir_.string(), "a1", "tcp://127.0.0.1:1", RealKeys);
  auto a2 = EnrollAgent(dir_.string(), "a2", "tcp://127.0.0.1:1", RealKeys);
  ASSERT_TRUE(a1.has_value() && a2.has_value());

  auto server = CurveServer(*server_key);
  ASSERT_TRUE(server.has_value()) << server.error().ToString();
  std::atomic<int> from_a1{0};
  std::mutex ids_mu;
  std::vector<std::string> ids;
  (*server)->Run([&](const std::string& id, const std::string&, bool) {
    std::lock_guard lock(ids_mu);
    ids.push_back(id);
    if (id == "a1") ++from_a1;
  });

  zmq::context_t ctx;
  zmq::socket_t agent, silent, guesser;
  ASSERT_TRUE(ConnectDealer(ctx, agent, NewBusRoutingId("a1"), *server_key, *a1,
                            (*server)->endpoint()));
  agent.send(zmq::str_buffer("register"), zmq::send_flags::none);
  ASSERT_TRUE(WaitFor([&] { return from_a1.load() == 1; }, milliseconds(5000)));

  // a2's key, once as the bare id "a1" that never speaks (before routing ids carried a nonce,
  // ROUTER_HANDOVER gave it a1's route and with it a1's launches), once as a guessed "a1/..."
  // that speaks (dropped: its key is a2's).
  ASSERT_TRUE(ConnectDealer(ctx, silent, "a1", *server_key, *a2, (*server)->endpoint()));
  ASSERT_TRUE(ConnectDealer(ctx, guesser, "a1/" + std::string(32, '0'), *server_key, *a2,
                            (*server)->endpoint()));
  guesser.send(zmq::str_buffer("register"), zmq::send_flags::none);
  ASSERT_TRUE(WaitFor([&] { return (*server)->rejected_agent_ids() == 1; }, milliseconds(5000)));

  for (const char* m : {"launch 1", "launch 2"}) (*server)->Send("a1", m);
  EXPECT_EQ(Receive(agent, milliseconds(5000)), "launch 1");
  EXPECT_EQ(Receive(agent, milliseconds(5000)), "launch 2");
  EXPECT_EQ(Receive(silent, milliseconds(300)), std::nullopt) << "a silent takeover got a1's messages";
  EXPECT_EQ(Receive(guesser, milliseconds(0)), std::nullopt);
  EXPECT_EQ((*server)->unbound_routes(), 0);

  // a1 restarts: a new socket, a new nonce. Once it has spoken, its messages go there.
  agent = zmq::socket_t();
  zmq::socket_t restarted;
  ASSERT_TRUE(ConnectDealer(ctx, restarted, NewBusRoutingId("a1"), *server_key, *a1,
                            (*server)->endpoint()));
  restarted.send(zmq::str_buffer("register"), zmq::send_flags::none);
  ASSERT_TRUE(WaitFor([&] { return from_a1.load() == 2; }, milliseconds(5000)));
  (*server)->Send("a1", "launch 3");
  EXPECT_EQ(Receive(restarted, milliseconds(5000)), "launch 3");
  EXPECT_EQ(Receive(silent, milliseconds(0)), std::nullopt);
  std::lock_guard lock(ids_mu);
  EXPECT_EQ(ids, (std::vector<std::string>{"a1", "a1"})) << "on_message gets the agent id alone";
}

}  // namespace
}  // namespace podsched::daemon
