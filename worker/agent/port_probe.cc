// The I/O half of rendezvous_ports.h: probing this machine's TCP ports.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "worker/agent/rendezvous_ports.h"

namespace podsched::agent {
namespace {

// SO_REUSEADDR as the rendezvous servers set it: connections of an earlier run in TIME_WAIT do
// not count as taken, a socket bound or listening on the port does.
int BindAny(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

}  // namespace

bool TcpPortInUse(int port) {
  const int fd = BindAny(port);
  if (fd >= 0) {
    close(fd);
    return false;
  }
  return errno == EADDRINUSE;
}

Result<std::vector<int>> PickFreeTcpPorts(int n) {
  std::vector<int> fds, ports;
  Status error = Status::Ok();
  for (int i = 0; i < n && error.ok(); ++i) {
    const int fd = BindAny(0);
    sockaddr_in addr{};
    socklen_t len = sizeof addr;
    if (fd < 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      error = Status(StatusCode::kUnavailable,
                     std::string("no free TCP port to move a rendezvous port to: ") +
                         std::strerror(errno));
      if (fd >= 0) close(fd);
      break;
    }
    fds.push_back(fd);
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) close(fd);
  if (!error.ok()) return std::unexpected(error);
  return ports;
}

FreedRendezvous FreeRendezvousPorts(EnvMap env) {
  std::vector<int> taken;
  for (int port : RendezvousPortsOf(env)) {
    if (TcpPortInUse(port)) taken.push_back(port);
  }
  if (taken.empty()) return {std::move(env), {}, ""};
  auto free = PickFreeTcpPorts(static_cast<int>(taken.size()));
  if (!free) return {std::move(env), {}, free.error().message()};
  std::map<int, int> moved;
  std::vector<std::string> notes;
  for (size_t i = 0; i < taken.size(); ++i) {
    moved[taken[i]] = (*free)[i];
    notes.push_back("podworker: rendezvous port " + std::to_string(taken[i]) +
                    " is already in use on this machine (another process holds it); this job "
                    "uses port " + std::to_string((*free)[i]) + " instead");
  }
  return {MoveRendezvousPorts(std::move(env), moved), std::move(notes), ""};
}

}  // namespace podsched::agent
