// The rsh side channel's framing and configuration strings (docs/bus.md, "podworker rsh").
//
// Frames: a 4-byte big-endian length, then that many bytes (a serialized RshRequest or RshFrame),
// at most kMaxRshFrame. Thread safety: FrameReader is a value owned by one thread; the rest are
// pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/endpoint.h"
#include "common/status.h"

namespace podsched::agent {

inline constexpr size_t kMaxRshFrame = 1 << 20;

// Prefixes `payload` with its length. The caller keeps payloads <= kMaxRshFrame.
std::string EncodeFrame(std::string_view payload);

// Splits a byte stream into frames.
class FrameReader {
 public:
  void Append(std::string_view bytes) { buffer_.append(bytes); }
  // true and the next whole frame in `payload`; false when more bytes are needed; an error
  // (kResourceExhausted) when a frame announces more than kMaxRshFrame: the stream is then
  // unusable.
  Result<bool> Next(std::string& payload);

 private:
  std::string buffer_;
};

using TcpEndpoint = Ipv4Endpoint;
// "tcp://127.0.0.1:40001" -> {127.0.0.1, 40001}.
Result<TcpEndpoint> ParseTcpEndpoint(std::string_view url);
std::string FormatTcpEndpoint(const TcpEndpoint& ep);

// POD_RSH_ENDPOINTS: "4=tcp://127.0.0.1:40001,5=tcp://127.0.0.1:40002".
Result<std::map<int32_t, TcpEndpoint>> ParseRshEndpoints(std::string_view text);
std::string FormatRshEndpoints(const std::map<int32_t, std::string>& endpoints);

// What `podworker rsh` was asked to do: the arguments after "rsh", as ssh would get them
// ("[options] HOST COMMAND..."). ssh options are skipped (those that take a value with it).
struct RshCommand {
  int32_t host = -1;
  std::vector<std::string> argv;
};
Result<RshCommand> ParseRshCommandLine(const std::vector<std::string>& args);

// The command line the remote side runs under /bin/sh -c: argv joined by single spaces (sshd's
// behaviour; OpenMPI quotes what needs quoting itself).
std::string JoinForShell(const std::vector<std::string>& argv);

}  // namespace podsched::agent
