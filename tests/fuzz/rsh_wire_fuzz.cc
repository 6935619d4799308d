// The rsh side channel: a byte stream cut into frames by FrameReader (fed in two chunks, as TCP
// may deliver it), and `podworker rsh`'s command line (arguments separated by NUL bytes) and
// POD_RSH_ENDPOINTS.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "worker/agent/rsh_wire.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  agent::FrameReader reader;
  const size_t half = size / 2;
  for (std::string_view chunk : {bytes.substr(0, half), bytes.substr(half)}) {
    reader.Append(chunk);
    std::string payload;
    while (true) {
      auto next = reader.Next(payload);
      if (!next || !*next) break;
    }
  }

  std::vector<std::string> args;
  size_t start = 0;
  for (size_t i = 0; i <= size; ++i) {
    if (i == size || bytes[i] == '\0') {
      args.emplace_back(bytes.substr(start, i - start));
      start = i + 1;
    }
  }
  if (auto cmd = agent::ParseRshCommandLine(args)) (void)agent::JoinForShell(cmd->argv);
  (void)agent::ParseRshEndpoints(bytes);
  (void)agent::ParseTcpEndpoint(bytes);
  return 0;
}
