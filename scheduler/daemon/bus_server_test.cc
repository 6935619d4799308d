// BusServer with real ZeroMQ CURVE sockets on loopback: an enrolled agent's route, and what a
// revocation does to messages sent to it (audit L9).
#include "scheduler/daemon/bus_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <zmq.hpp>

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

class BusServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("bus-server-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(BusServerTest, NothingMoreReachesARevokedAgent) {
  bool created = false;
  auto server_key = LoadOrCreateServerKey(dir_.string(), RealKeys, &created);
  ASSERT_TRUE(server_key.has_value()) << server_key.error().ToString();
  auto agent = EnrollAgent(dir_.string(), "a1", "tcp://127.0.0.1:1", RealKeys);
  ASSERT_TRUE(agent.has_value()) << agent.error().ToString();

  BusConfig bus;
  bus.curve = true;
  bus.curve_secret_key = server_key->secret_key;
  bus.agent_keys_file = AgentKeysPath(dir_.string());
  auto server = BusServer::Bind("tcp://127.0.0.1:*", bus);
  ASSERT_TRUE(server.has_value()) << server.error().ToString();
  std::atomic<int> received{0};
  (*server)->Run([&](const std::string& id, const std::string&, bool) {
    if (id == "a1") ++received;
  });

  zmq::context_t ctx;
  zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::routing_id, "a1");
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::curve_serverkey, server_key->public_key);
  dealer.set(zmq::sockopt::curve_publickey, agent->public_key);
  dealer.set(zmq::sockopt::curve_secretkey, agent->secret_key);
  dealer.connect((*server)->endpoint());
  auto receive = [&](milliseconds wait) -> std::optional<std::string> {
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, wait);
    zmq::message_t m;
    if (!dealer.recv(m, zmq::recv_flags::dontwait)) return std::nullopt;
    return m.to_string();
  };

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

}  // namespace
}  // namespace podsched::daemon
