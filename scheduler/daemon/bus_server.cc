#include "scheduler/daemon/bus_server.h"

#include <spdlog/spdlog.h>

#include <array>
#include <sys/stat.h>

#include "common/key_file.h"
#include "scheduler/daemon/agent_keys.h"

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
    if (bus.curve) {
      auto secret = DecodeZ85(bus.curve_secret_key, "bus.curve_secret_key");
      if (!secret) return std::unexpected(secret.error());
      for (const auto& k : bus.curve_agent_keys) {
        auto key = DecodeZ85(k, "bus.curve_agent_keys");
        if (!key) return std::unexpected(key.error());
        s->config_keys_[*key] = k;
      }
      s->agent_keys_file_ = bus.agent_keys_file;
      if (!s->agent_keys_file_.empty()) {
        auto agents = ReadAgentKeys(s->agent_keys_file_);
        if (!agents) return std::unexpected(agents.error());
        s->ReloadAgentKeys(true);
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
        const bool ok = frames.size() == 2;
        const std::string routing_id = frames[0].to_string();
        const std::string agent_id(AgentIdOfRoutingId(routing_id));
        if (curve_) {
          auto key = BoundKey(frames.back(), agent_id);
          if (!key) {
            // A connection that may not speak as this id. Should it hold the id's route (it
            // took over that exact routing id), nothing more goes out until one that may speaks.
            auto route = routes_.find(agent_id);
            if (route != routes_.end() && route->second.routing_id == routing_id) {
              routes_.erase(route);
            }
            continue;
          }
          routes_[agent_id] = Route{routing_id, std::move(*key)};
        } else {
          routes_[agent_id] = Route{routing_id, ""};
        }
        on_message_(agent_id, ok ? frames[1].to_string() : std::string(), ok);
      }
    }
    if (items[1].revents & ZMQ_POLLIN) {
      for (int i = 0; i < 1000; ++i) {
        std::vector<zmq::message_t> frames;
        auto got = zmq::recv_multipart(pull_, std::back_inserter(frames), zmq::recv_flags::dontwait);
        if (!got) break;
        if (frames.size() != 2) continue;
        if (frames[0].size() == 0) return;  // stop
        const std::string agent_id = frames[0].to_string();
        if (curve_ && !RouteBound(agent_id)) {
          ++unbound_routes_;
          continue;
        }
        auto route = routes_.find(agent_id);
        const std::string& routing_id = route != routes_.end() ? route->second.routing_id : agent_id;
        try {
          router_.send(zmq::buffer(routing_id), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
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
  // User-Id "ID KEY": the agent id the key is bound to ("*" for a configured key: any id) and
  // the key itself, so that a later revocation is seen per message (BoundTo).
  std::string user_id;
  if (req[5].to_string_view() == "CURVE" && req.size() >= 7 && req[6].size() == 32) {
    const std::string key = req[6].to_string();
    ReloadAgentKeys(false);
    if (auto it = config_keys_.find(key); it != config_keys_.end()) {
      user_id = "* " + it->second;
    } else if (auto e = enrolled_.find(key); e != enrolled_.end()) {
      char z85[41] = {};
      zmq_z85_encode(z85, reinterpret_cast<const uint8_t*>(key.data()), 32);
      user_id = e->second + " " + z85;
    }
  }
  const bool allowed = !user_id.empty();
  if (!allowed) {
    if (++rejected_keys_ % 100 == 1) {
      spdlog::warn("bus: refused a CURVE handshake from {}: key not enrolled ({} so far; "
                   "podsched agent enroll)", req.size() > 3 ? req[3].to_string() : "?",
                   rejected_keys_.load());
    }
  }
  std::array<std::string, 6> reply = {"1.0", req[1].to_string(), allowed ? "200" : "400",
                                      allowed ? "OK" : "agent key not enrolled", user_id, ""};
  for (size_t i = 0; i < reply.size(); ++i) {
    zap_.send(zmq::buffer(reply[i]), i + 1 < reply.size() ? zmq::send_flags::sndmore
                                                          : zmq::send_flags::none);
  }
}

void BusServer::ReloadAgentKeys(bool force) {
  if (agent_keys_file_.empty()) return;
  struct stat st{};
  std::pair<int64_t, int64_t> stamp{0, 0};
  if (stat(agent_keys_file_.c_str(), &st) == 0) {
    stamp = {st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, st.st_size};
  }
  agent_keys_checked_ = std::chrono::steady_clock::now();
  if (!force && stamp == agent_keys_stamp_) return;
  auto agents = ReadAgentKeys(agent_keys_file_);
  if (!agents) {
    spdlog::error("bus: {}; keeping the enrolled agents read before", agents.error().message());
    return;
  }
  agent_keys_stamp_ = stamp;
  enrolled_.clear();
  enrolled_z85_.clear();
  {
    std::lock_guard lock(enrolled_hosts_mu_);
    enrolled_hosts_.clear();
    for (const auto& a : *agents) {
      if (a.hosts) enrolled_hosts_[a.agent_id] = HostEnrolment{a.pod, *a.hosts};
    }
  }
  for (const auto& a : *agents) {
    std::string raw(32, '\0');
    if (zmq_z85_decode(reinterpret_cast<uint8_t*>(raw.data()), a.public_key.c_str()) == nullptr) {
      continue;
    }
    enrolled_[raw] = a.agent_id;
    enrolled_z85_[a.public_key] = a.agent_id;
  }
  spdlog::info("bus: {} enrolled agents (from {})", enrolled_.size(), agent_keys_file_);
}

std::optional<HostEnrolment> BusServer::EnrolledHostsOf(const std::string& agent_id) const {
  std::lock_guard lock(enrolled_hosts_mu_);
  auto it = enrolled_hosts_.find(agent_id);
  if (it == enrolled_hosts_.end()) return std::nullopt;
  return it->second;
}

bool BusServer::RouteBound(const std::string& agent_id) {
  auto route = routes_.find(agent_id);
  if (route == routes_.end()) return false;
  if (route->second.key == "*") return true;
  if (std::chrono::steady_clock::now() - agent_keys_checked_ > std::chrono::seconds(1)) {
    ReloadAgentKeys(false);
  }
  auto it = enrolled_z85_.find(route->second.key);
  if (it != enrolled_z85_.end() && it->second == agent_id) return true;
  if (unbound_routes_ % 100 == 0) {
    spdlog::warn("bus: not sending to agent '{}': the key its connection spoke with is no longer "
                 "enrolled for it (revoked)", agent_id);
  }
  return false;
}

std::optional<std::string> BusServer::BoundKey(const zmq::message_t& msg,
                                               const std::string& agent_id) {
  const char* user = zmq_msg_gets(const_cast<zmq_msg_t*>(msg.handle()), "User-Id");
  const std::string_view uid = user == nullptr ? "" : user;
  const size_t space = uid.find(' ');
  if (space != std::string_view::npos && uid.substr(0, space) == "*") return std::string("*");
  if (std::chrono::steady_clock::now() - agent_keys_checked_ > std::chrono::seconds(1)) {
    ReloadAgentKeys(false);
  }
  bool ok = false;
  if (space != std::string_view::npos && uid.substr(0, space) == agent_id) {
    auto it = enrolled_z85_.find(std::string(uid.substr(space + 1)));
    ok = it != enrolled_z85_.end() && it->second == agent_id;
  }
  if (!ok && ++rejected_agent_ids_ % 100 == 1) {
    spdlog::warn("bus: dropped a message from agent id '{}': its CURVE key is {} ({} so far)",
                 agent_id,
                 space == std::string_view::npos ? "unknown"
                 : uid.substr(0, space) == agent_id
                     ? "no longer enrolled (revoked)"
                     : "enrolled for agent id '" + std::string(uid.substr(0, space)) + "'",
                 rejected_agent_ids_.load());
  }
  if (!ok) return std::nullopt;
  return std::string(uid.substr(space + 1));
}

}  // namespace podsched::daemon
