#include "worker/agent/rsh_wire.h"


#include <arpa/inet.h>

#include <cstring>

#include "common/strings.h"
#include "worker/agent/mpirun_argv.h"

namespace podsched::agent {

std::string EncodeFrame(std::string_view payload) {
  const uint32_t n = htonl(static_cast<uint32_t>(payload.size()));
  std::string out(reinterpret_cast<const char*>(&n), 4);
  out.append(payload);
  return out;
}

Result<bool> FrameReader::Next(std::string& payload) {
  if (buffer_.size() < 4) return false;
  uint32_t n = 0;
  std::memcpy(&n, buffer_.data(), 4);
  n = ntohl(n);
  if (n > kMaxRshFrame) {
    return Error(StatusCode::kResourceExhausted,
                 "rsh frame of " + std::to_string(n) + " bytes exceeds the limit of " +
                     std::to_string(kMaxRshFrame));
  }
  if (buffer_.size() < 4 + static_cast<size_t>(n)) return false;
  payload.assign(buffer_, 4, n);
  buffer_.erase(0, 4 + static_cast<size_t>(n));
  return true;
}

Result<TcpEndpoint> ParseTcpEndpoint(std::string_view url) { return ParseIpv4Endpoint(url, "tcp"); }

std::string FormatTcpEndpoint(const TcpEndpoint& ep) { return FormatIpv4Endpoint("tcp", ep); }

Result<std::map<int32_t, TcpEndpoint>> ParseRshEndpoints(std::string_view text) {
  std::map<int32_t, TcpEndpoint> out;
  if (text.empty()) return InvalidArgument("POD_RSH_ENDPOINTS is empty");
  for (const std::string_view part : SplitOn(text, ',')) {
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgument("POD_RSH_ENDPOINTS entry '" + std::string(part) +
                             "' is not HOST=tcp://IP:PORT");
    }
    auto host = ParseMpiHostName(part.substr(0, eq));
    if (!host) return std::unexpected(host.error().WithContext("POD_RSH_ENDPOINTS"));
    auto ep = ParseTcpEndpoint(part.substr(eq + 1));
    if (!ep) return std::unexpected(ep.error().WithContext("POD_RSH_ENDPOINTS"));
    out[*host] = *ep;
  }
  return out;
}

std::string FormatRshEndpoints(const std::map<int32_t, std::string>& endpoints) {
  std::string out;
  for (const auto& [host, url] : endpoints) {
    if (!out.empty()) out += ',';
    out += std::to_string(host) + "=" + url;
  }
  return out;
}

Result<RshCommand> ParseRshCommandLine(const std::vector<std::string>& args) {
  // ssh(1) options that take an argument (separately or attached: "-p 22", "-p22").
  static constexpr std::string_view kWithValue = "BbcDEeFIiJLlmOopQRSWw";
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;
    for (size_t k = 1; k < a.size(); ++k) {
      if (kWithValue.find(a[k]) != std::string_view::npos) {
        if (k + 1 == a.size()) ++i;  // the value is the next argument
        break;
      }
    }
  }
  if (i >= args.size()) return InvalidArgument("usage: podworker rsh [ssh options] HOST COMMAND...");
  std::string_view host = args[i];
  if (const size_t at = host.rfind('@'); at != std::string_view::npos) host.remove_prefix(at + 1);
  auto h = ParseMpiHostName(host);
  if (!h) return std::unexpected(h.error());
  RshCommand cmd;
  cmd.host = *h;
  cmd.argv.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  if (cmd.argv.empty()) return InvalidArgument("podworker rsh: no command for host " + args[i]);
  return cmd;
}

std::string JoinForShell(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

}  // namespace podsched::agent
