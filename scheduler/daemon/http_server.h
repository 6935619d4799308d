// HttpServer: the HTTP/1.1 front end of podsched (Boost.Beast; the only translation unit that
// includes Beast).
//
// It accepts connections on the main io_context, reads requests with bounded headers and body,
// and hands each request to a Backend as a plain HttpRequest; the Backend answers later (from any
// thread), the answer is posted to the io_context, whose one thread writes the response and
// then reads the next request (keep-alive). Oversized bodies get 413, oversized headers 431, malformed requests 400, each as
// JSON {code, message}, and the connection is closed after such an error (the server keeps
// serving others).
//
// GET /api/v1/events/stream is a Server-Sent Events stream: after the Backend accepts it, the
// session writes frames as they come (and a comment line every 15 s to detect dead clients).
//
// Thread safety: Start/Stop on the io_context's thread. Backend callbacks may run anywhere.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "common/status.h"
#include "scheduler/daemon/http_types.h"

namespace podsched::daemon {

class HttpBackend {
 public:
  virtual ~HttpBackend() = default;
  using Respond = std::function<void(HttpResponse)>;
  using OnFrame = std::function<void(std::string)>;
  using OnOpen = std::function<void(std::variant<int64_t, HttpResponse>)>;
  // Answers a request by calling `respond` once, from any thread.
  virtual void Handle(HttpRequest request, Respond respond) = 0;
  // Opens an event stream: `opened` gets the stream id or an error response; then `frame` is
  // called for each SSE frame until CloseStream(id). An empty frame ends the stream from the
  // backend's side: the server writes what is queued and closes the connection (no CloseStream).
  virtual void OpenStream(HttpRequest request, OnFrame frame, OnOpen opened) = 0;
  virtual void CloseStream(int64_t id) = 0;
  // A request the server answered itself (413, 431, 400 on malformed HTTP), for the metrics.
  virtual void CountRejected(int status) = 0;
};

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  int port = 8470;
  size_t max_body_bytes = 1 << 20;
  size_t max_header_bytes = 16 << 10;
  size_t max_connections = 2048;  // beyond: the longest idle one is closed, else 503 and close
  size_t max_connections_per_address = 0;  // beyond: 503 and close; 0: no cap
};

class HttpServer {
 public:
  // Binds and listens. Errors: bad address, port in use (the message names them).
  static Result<std::unique_ptr<HttpServer>> Start(boost::asio::io_context& io,
                                                   HttpServerOptions options, HttpBackend* backend);
  ~HttpServer();
  // The bound port (useful with port 0).
  int port() const;
  // Stops accepting and closes every open connection.
  void Stop();

  class Impl;

 private:
  explicit HttpServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace podsched::daemon
