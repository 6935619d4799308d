#include "worker/train/progress_sink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace podsched::train {

UdpProgressSink::~UdpProgressSink() {
  if (fd_ >= 0) ::close(fd_);
}

Status UdpProgressSink::Open(const std::string& url, std::string key) {
  key_ = std::move(key);
  auto ep = progress::ParseProgressEndpoint(url);
  if (!ep) return ep.error();
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return Status(StatusCode::kInternal, std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(ep->port);
  inet_pton(AF_INET, ep->ip.c_str(), &addr.sin_addr);
  // connect() on UDP only fixes the destination, so Send is one send() call.
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return Status(StatusCode::kUnavailable, "connect " + url + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

void UdpProgressSink::Send(const progress::Progress& p) {
  if (fd_ < 0) return;
  progress::Progress keyed = p;
  keyed.key = key_;
  const std::string json = progress::ProgressJson(keyed);
  (void)::send(fd_, json.data(), json.size(), MSG_DONTWAIT);
}

}  // namespace podsched::train
