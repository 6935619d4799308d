#include "worker/agent/rendezvous_ports.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <utility>

namespace podsched::agent {
namespace {

constexpr const char* kMasterPort = "MASTER_PORT";
constexpr const char* kJaxCoordinator = "JAX_COORDINATOR_ADDRESS";

std::optional<int> ParsePort(std::string_view text) {
  int port = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535) {
    return std::nullopt;
  }
  return port;
}

// The port of "HOST:PORT", and where it starts.
std::optional<std::pair<int, size_t>> PortOfAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  auto port = ParsePort(std::string_view(address).substr(colon + 1));
  if (!port) return std::nullopt;
  return std::pair{*port, colon + 1};
}

}  // namespace

std::vector<int> RendezvousPortsOf(const EnvMap& env) {
  std::vector<int> ports;
  auto add = [&](std::optional<int> p) {
    if (p && std::find(ports.begin(), ports.end(), *p) == ports.end()) ports.push_back(*p);
  };
  if (auto it = env.find(kMasterPort); it != env.end()) add(ParsePort(it->second));
  if (auto it = env.find(kJaxCoordinator); it != env.end()) {
    if (auto p = PortOfAddress(it->second)) add(p->first);
  }
  return ports;
}

EnvMap MoveRendezvousPorts(EnvMap env, const std::map<int, int>& moved) {
  if (auto it = env.find(kMasterPort); it != env.end()) {
    if (auto p = ParsePort(it->second); p && moved.contains(*p)) {
      it->second = std::to_string(moved.at(*p));
    }
  }
  if (auto it = env.find(kJaxCoordinator); it != env.end()) {
    if (auto p = PortOfAddress(it->second); p && moved.contains(p->first)) {
      it->second = it->second.substr(0, p->second) + std::to_string(moved.at(p->first));
    }
  }
  return env;
}

}  // namespace podsched::agent
