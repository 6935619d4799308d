#include "common/endpoint.h"

#include <arpa/inet.h>

#include <charconv>

namespace podsched {

Result<Ipv4Endpoint> ParseIpv4Endpoint(std::string_view url, std::string_view scheme) {
  const std::string prefix = std::string(scheme) + "://";
  auto bad = [&] {
    return InvalidArgument("'" + std::string(url) + "' is not " + prefix + "IPV4:PORT (e.g. " +
                           prefix + "127.0.0.1:9000)");
  };
  std::string_view rest = url;
  if (!rest.starts_with(prefix)) return bad();
  rest.remove_prefix(prefix.size());
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) return bad();
  Ipv4Endpoint ep;
  ep.ip = std::string(rest.substr(0, colon));
  in_addr addr{};
  if (inet_pton(AF_INET, ep.ip.c_str(), &addr) != 1) return bad();
  const std::string_view port = rest.substr(colon + 1);
  unsigned v = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
  if (ec != std::errc() || p != port.data() + port.size() || v == 0 || v > 65535) return bad();
  ep.port = static_cast<uint16_t>(v);
  return ep;
}

std::string FormatIpv4Endpoint(std::string_view scheme, const Ipv4Endpoint& ep) {
  return std::string(scheme) + "://" + ep.ip + ":" + std::to_string(ep.port);
}

}  // namespace podsched
