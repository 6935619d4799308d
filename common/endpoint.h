// "SCHEME://IPV4:PORT" endpoints: the progress endpoint (udp://) and the agents' rsh endpoints
// (tcp://). Numeric IPv4 only, on purpose: these addresses come from the environment of a job
// and must never trigger a DNS lookup. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace podsched {

struct Ipv4Endpoint {
  std::string ip;  // numeric IPv4
  uint16_t port = 0;
};

// Parses "udp://127.0.0.1:9000" for scheme "udp"; kInvalidArgument naming the expected form.
Result<Ipv4Endpoint> ParseIpv4Endpoint(std::string_view url, std::string_view scheme);
// "tcp://127.0.0.1:40001".
std::string FormatIpv4Endpoint(std::string_view scheme, const Ipv4Endpoint& ep);

}  // namespace podsched
