// HttpClient against servers on loopback that answer too slowly: each request must end with
// kUnavailable, never hang (audit M13). The servers are real sockets; only their pace is chosen.
#include "store/objects/http_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace podsched::store {
namespace {

// Accepts one connection, reads the request head, answers `head`, then sends `chunk` every
// `every` until the client goes or the test ends.
class SlowServer {
 public:
  SlowServer(std::string head, std::string chunk, std::chrono::milliseconds every)
      : head_(std::move(head)), chunk_(std::move(chunk)), every_(every) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listen_fd_, 4) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on loopback";
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~SlowServer() {
    done_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/bucket/key"; }

 private:
  void Serve() {
    const int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    std::string request;
    char buf[4096];
    // The request head; a body (PUT) is read and dropped as it comes, below.
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) break;
      request.append(buf, static_cast<size_t>(n));
    }
    (void)!write(fd, head_.data(), head_.size());
    while (!done_) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(every_.count())) == 1) {
        if (read(fd, buf, sizeof buf) <= 0) break;  // the client gave up
        continue;
      }
      if (send(fd, chunk_.data(), chunk_.size(), MSG_NOSIGNAL) < 0) break;
    }
    close(fd);
  }

  const std::string head_, chunk_;
  const std::chrono::milliseconds every_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

constexpr const char* kEndlessBody = "HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n";

TEST(HttpClientTest, ATricklingAnswerIsCutByTheMinimumRate) {
  // 64 bytes every 200 ms: 320 B/s, above the old 1 B/s floor, below 1 KiB/s.
  SlowServer server(kEndlessBody, std::string(64, 'x'), std::chrono::milliseconds(200));
  HttpClient client({.stall_timeout_s = 1});
  const auto start = std::chrono::steady_clock::now();
  auto r = client.Perform({.method = "GET", .url = server.Url()});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kUnavailable) << r.error().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(HttpClientTest, AnUploadEndsWithinItsTotalBoundHoweverFastTheServerTrickles) {
  // 8 KiB every 200 ms: 40 KiB/s passes the rate rule forever; the total bound ends it.
  SlowServer server(kEndlessBody, std::string(8192, 'x'), std::chrono::milliseconds(200));
  HttpClient client({.stall_timeout_s = 1, .send_timeout_base_s = 2});
  const std::string body(4096, 'b');
  const auto start = std::chrono::steady_clock::now();
  auto r = client.Perform({.method = "PUT", .url = server.Url(), .body = body});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kUnavailable) << r.error().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace podsched::store
