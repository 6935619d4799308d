#include "scheduler/daemon/bus_server.h"

#include <spdlog/spdlog.h>

#include <array>

namespace podsched::daemon {
namespace {

constexpr char kOutbox[] = "inproc://podsched-bus-outbox";
// An empty agent id on the outbox means "stop" (agent ids are never empty).
constexpr char kStop[] = "";

Result<std::string> DecodeZ85(const std::string& key, const char* what) {
  std::string out(32, '\0');
  if (key.size() != 40 || zmq_z85_decode(reinterpret_cast<uint8_t*>(out.data()), key.c_str()) ==
                              nullptr) {
    return InvalidArgument(std::string(what) + ": not a 40-character Z85 key");
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<BusServer>> BusServer::Bind(const std::string& address,
                                                   const BusConfig& bus) {
  std::unique_ptr<BusServer> s(new BusServer());
  try {
    if (!bus.curve_secret_key.empty()) {
      auto secret = DecodeZ85(bus.curve_secret_key, "bus.curve_secret_key");
      if (!secret) return std::unexpected(secret.error());
      for (const auto& k : bus.curve_agent_keys) {
        auto key = DecodeZ85(k, "bus.curve_agent_keys");
        if (!key) return std::unexpected(key.error());
        s->agent_keys_.push_back(*key);
      }
      // The ZAP handler must be bound before the ROUTER accepts anyone.
      s->zap_ = zmq::socket_t(s->context_, zmq::socket_type::rep);
      s->zap_.bind("inproc://zeromq.zap.01");
      s->curve_ = true;
      s->router_ = zmq::socket_t(s->context_, zmq::socket_type::router);
      s->router_.set(zmq::sockopt::curve_server, 1);
      s->router_.set(zmq::sockopt::curve_secretkey, zmq::buffer(*secret));
    } else {
      s->router_ = zmq::socket_t(s->context_, zmq::socket_type::router);
    }
    s->router_.set(zmq::sockopt::router_handover, 1);
    s->router_.set(zmq::sockopt::router_mandatory, 1);
    s->router_.set(zmq::sockopt::maxmsgsize, int64_t{1} << 20);
    s->router_.set(zmq::sockopt::linger, 0);
    s->router_.set(zmq::sockopt::sndhwm, 100000);
    s->router_.set(zmq::sockopt::rcvhwm, 100000);
    s->router_.bind(address);
    s->endpoint_ = s->router_.get(zmq::sockopt::last_endpoint);
    s->pull_ = zmq::socket_t(s->context_, zmq::socket_type::pull);
    s->pull_.bind(kOutbox);
    s->push_ = zmq::socket_t(s->context_, zmq::socket_type::push);
    s->push_.set(zmq::sockopt::linger, 0);
    s->push_.connect(kOutbox);
  } catch (const zmq::error_t& e) {
    return Unavailable("cannot bind the worker bus on " + address + ": " + e.what());
  }
  return s;
}

BusServer::~BusServer() {
  if (thread_.joinable()) {
    try {
      push_.send(zmq::buffer(kStop, 0), zmq::send_flags::sndmore);
      push_.send(zmq::buffer(kStop, 0), zmq::send_flags::none);
    } catch (const zmq::error_t&) {
    }
    thread_.join();
  }
}

void BusServer::Run(OnMessage on_message) {
  on_message_ = std::move(on_message);
  thread_ = std::thread([this] { Loop(); });
}

void BusServer::Send(const std::string& agent_id, const std::string& bytes) {
  if (agent_id.empty()) return;
  try {
    push_.send(zmq::buffer(agent_id), zmq::send_flags::sndmore);
    push_.send(zmq::buffer(bytes), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    spdlog::warn("bus: cannot queue a message for {}: {}", agent_id, e.what());
  }
}

void BusServer::Loop() {
  std::vector<zmq::pollitem_t> items = {{router_.handle(), 0, ZMQ_POLLIN, 0},
                                        {pull_.handle(), 0, ZMQ_POLLIN, 0}};
  if (curve_) items.push_back({zap_.handle(), 0, ZMQ_POLLIN, 0});
  for (;;) {
    try {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(-1));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      spdlog::error("bus: poll failed: {}", e.what());
      return;
    }
    if (items[0].revents & ZMQ_POLLIN) {
      // Drain what is there (bounded, so the outbox is not starved).
      for (int i = 0; i < 1000; ++i) {
        std::vector<zmq::message_t> frames;
        zmq::recv_result_t got;
        try {
          got = zmq::recv_multipart(router_, std::back_inserter(frames), zmq::recv_flags::dontwait);
        } catch (const zmq::error_t&) {
          break;
        }
        if (!got) break;
        bool ok = frames.size() == 2;
        on_message_(frames[0].to_string(), ok ? frames[1].to_string() : std::string(), ok);
      }
    }
    if (items[1].revents & ZMQ_POLLIN) {
      for (int i = 0; i < 1000; ++i) {
        std::vector<zmq::message_t> frames;
        auto got = zmq::recv_multipart(pull_, std::back_inserter(frames), zmq::recv_flags::dontwait);
        if (!got) break;
        if (frames.size() != 2) continue;
        if (frames[0].size() == 0) return;  // stop
        try {
          router_.send(frames[0], zmq::send_flags::sndmore | zmq::send_flags::dontwait);
          router_.send(frames[1], zmq::send_flags::dontwait);
        } catch (const zmq::error_t&) {  // EHOSTUNREACH: not connected (any more)
          ++unroutable_;
        }
      }
    }
    if (curve_ && (items[2].revents & ZMQ_POLLIN)) ServeZap();
  }
}

void BusServer::ServeZap() {
  std::vector<zmq::message_t> req;
  if (!zmq::recv_multipart(zap_, std::back_inserter(req), zmq::recv_flags::dontwait)) return;
  if (req.size() < 6) return;
  bool allowed = false;
  if (req[5].to_string_view() == "CURVE" && req.size() >= 7 && req[6].size() == 32) {
    std::string key = req[6].to_string();
    for (const auto& k : agent_keys_) allowed = allowed || k == key;
  }
  if (!allowed) ++rejected_keys_;
  std::array<std::string, 6> reply = {"1.0", req[1].to_string(), allowed ? "200" : "400",
                                      allowed ? "OK" : "agent key not allowed", "", ""};
  for (size_t i = 0; i < reply.size(); ++i) {
    zap_.send(zmq::buffer(reply[i]), i + 1 < reply.size() ? zmq::send_flags::sndmore
                                                          : zmq::send_flags::none);
  }
}

}  // namespace podsched::daemon
