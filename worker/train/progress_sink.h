// Sends progress JSON datagrams to POD_PROGRESS_ENDPOINT (udp://IPV4:PORT); the format is
// worker/progress/progress_wire.h.
//
// Thread safety: one thread.
#pragma once

#include <string>

#include "common/status.h"
#include "worker/progress/progress_wire.h"

namespace podsched::train {

class UdpProgressSink {
 public:
  ~UdpProgressSink();
  // Opens a UDP socket towards the endpoint URL; every datagram carries `key` (the job's
  // POD_PROGRESS_KEY: the agent drops datagrams without it).
  Status Open(const std::string& url, std::string key);
  // Best effort: a datagram that cannot be sent is dropped.
  void Send(const progress::Progress& p);

 private:
  int fd_ = -1;
  std::string key_;
};

}  // namespace podsched::train
