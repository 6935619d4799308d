// One zmq_poll over ZeroMQ sockets and raw fds, each with its handler; the agent's loop builds a
// new set every iteration (the fds of jobs and rsh sessions come and go).
//
// Thread safety: one thread.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <utility>
#include <vector>
#include <zmq.hpp>

namespace podsched::agent {

class PollSet {
 public:
  using Handler = std::function<void(short revents)>;

  void AddFd(int fd, short events, Handler handler) {
    items_.push_back({nullptr, fd, events, 0});
    handlers_.push_back(std::move(handler));
  }
  void AddSocket(zmq::socket_t& socket, short events, Handler handler) {
    items_.push_back({socket.handle(), 0, events, 0});
    handlers_.push_back(std::move(handler));
  }

  // Waits up to `timeout` for any item, then runs the handler of each ready one, in the order
  // added. A handler may close fds of later items: each handler checks that its object still
  // exists.
  void Poll(std::chrono::milliseconds timeout) {
    try {
      zmq::poll(items_.data(), items_.size(), timeout);
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) spdlog::warn("poll: {}", e.what());
    }
    for (size_t i = 0; i < items_.size(); ++i) {
      if (items_[i].revents != 0) handlers_[i](items_[i].revents);
    }
  }

 private:
  std::vector<zmq::pollitem_t> items_;
  std::vector<Handler> handlers_;
};

}  // namespace podsched::agent
