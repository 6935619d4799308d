#include "worker/agent/rsh_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/strings.h"
#include "proto/bus.pb.h"
#include "worker/agent/rsh_admission.h"
#include "worker/agent/rsh_wire.h"

namespace podsched::agent {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "podworker rsh: %s\n", message.c_str());
  return 255;
}

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

int64_t EnvInt(const char* name) {
  const char* v = std::getenv(name);
  int64_t out = -1;
  if (v == nullptr) return -1;
  auto [p, ec] = std::from_chars(v, v + std::strlen(v), out);
  return ec == std::errc() && *p == '\0' ? out : -1;
}

}  // namespace

int RshMain(const std::vector<std::string>& args) {
  signal(SIGPIPE, SIG_IGN);
  auto cmd = ParseRshCommandLine(args);
  if (!cmd) return Fail(cmd.error().message());
  const char* endpoints_env = std::getenv("POD_RSH_ENDPOINTS");
  const char* token = std::getenv("POD_RSH_TOKEN");
  const int64_t job = EnvInt("POD_JOB_ID"), epoch = EnvInt("POD_EPOCH");
  if (endpoints_env == nullptr || token == nullptr || job < 0 || epoch < 0) {
    return Fail("POD_RSH_ENDPOINTS, POD_RSH_TOKEN, POD_JOB_ID and POD_EPOCH must be set (podworker "
                "sets them for the mpirun it starts)");
  }
  auto endpoints = ParseRshEndpoints(endpoints_env);
  if (!endpoints) return Fail(endpoints.error().message());
  auto ep = endpoints->find(cmd->host);
  if (ep == endpoints->end()) {
    return Fail("no endpoint for host " + std::to_string(cmd->host) + " in POD_RSH_ENDPOINTS");
  }

  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(ep->second.port);
  inet_pton(AF_INET, ep->second.ip.c_str(), &addr.sin_addr);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return Fail("cannot connect to " + FormatTcpEndpoint(ep->second) + " (agent of host " +
                std::to_string(cmd->host) + "): " + std::strerror(errno));
  }
  // The agent speaks first: a challenge, answered with a proof of this host's token (the token
  // itself never goes over the wire).
  FrameReader reader;
  char buf[65536];
  std::string challenge;
  while (challenge.empty()) {
    std::string payload;
    auto next = reader.Next(payload);
    if (!next) return Fail(next.error().message());
    if (*next) {
      bus::RshFrame f;
      if (!f.ParseFromString(payload) || f.body_case() != bus::RshFrame::kChallenge ||
          f.challenge().size() != 32) {
        return Fail("the agent of host " + std::to_string(cmd->host) + " sent no challenge");
      }
      challenge = f.challenge();
      break;
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail("connection to the agent of host " + std::to_string(cmd->host) + " lost");
    reader.Append(std::string_view(buf, static_cast<size_t>(n)));
  }
  bus::RshRequest req;
  req.mutable_job()->set_job_id(job);
  req.mutable_job()->set_epoch(epoch);
  req.set_proof(RshProof(RshHostToken(token, job, epoch, cmd->host), challenge));
  req.set_host(cmd->host);
  for (const auto& a : cmd->argv) req.add_argv(a);
  if (const char* send = std::getenv("POD_RSH_SEND_ENV")) {  // ssh's SendEnv
    for (std::string_view name : SplitOn(send, ',')) {
      if (name.empty()) continue;
      const std::string n(name);
      if (const char* v = std::getenv(n.c_str())) (*req.mutable_env())[n] = v;
    }
  }
  const std::string request = req.SerializeAsString();
  if (request.size() > kMaxRshFrame) return Fail("command line too long");
  if (!WriteAll(fd, EncodeFrame(request))) return Fail("sending the request failed");

  while (true) {
    std::string payload;
    auto next = reader.Next(payload);
    if (!next) return Fail(next.error().message());
    if (*next) {
      bus::RshFrame f;
      if (!f.ParseFromString(payload)) return Fail("malformed frame from the agent");
      switch (f.body_case()) {
        case bus::RshFrame::kStdoutData: WriteAll(1, f.stdout_data()); break;
        case bus::RshFrame::kStderrData: WriteAll(2, f.stderr_data()); break;
        case bus::RshFrame::kError:
          std::fprintf(stderr, "podworker rsh: refused by the agent of host %d: %s\n", cmd->host,
                       f.error().c_str());
          break;
        case bus::RshFrame::kExitStatus: return f.exit_status() & 255;
        default: break;
      }
      continue;
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail("connection to the agent of host " + std::to_string(cmd->host) + " lost");
    reader.Append(std::string_view(buf, static_cast<size_t>(n)));
  }
}

}  // namespace podsched::agent
