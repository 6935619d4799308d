// The only Beast translation unit of podsched (see http_server.h).
#include "scheduler/daemon/http_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>
#include <deque>
#include <map>
#include <mutex>
#include <optional>

#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// The audit's M4: one 60 s timer for everything let a client hold a connection for a minute by
// sending nothing. A new connection gets 10 s for its first request's header; a kept-alive one
// waits 5 s for the next; a body gets 60 s.
constexpr auto kFirstHeaderTimeout = std::chrono::seconds(10);
constexpr auto kKeepAliveTimeout = std::chrono::seconds(5);
constexpr auto kReadTimeout = std::chrono::seconds(60);
constexpr auto kHeartbeat = std::chrono::seconds(15);
constexpr size_t kMaxQueuedFrames = 4096;
constexpr std::string_view kStreamPath = "/api/v1/events/stream";

}  // namespace

class Session;

class HttpServer::Impl : public std::enable_shared_from_this<HttpServer::Impl> {
 public:
  Impl(asio::io_context& io, HttpServerOptions options, HttpBackend* backend)
      : io(io), acceptor(io), retry(io), options(std::move(options)), backend(backend) {}
  void Accept();
  // Why a new connection from `address` is turned away; "" when it may open. When every slot is
  // taken, the connection idle longest (waiting for a request, nothing read) is closed to make
  // room: idle sockets alone never lock out a client that has something to ask.
  std::string Admit(const std::string& address);
  void Register(Session* s, std::weak_ptr<Session> w, const std::string& address) {
    std::lock_guard lock(mu);
    sessions[s] = std::move(w);
    ++per_address[address];
  }
  void Unregister(Session* s, const std::string& address) {
    std::lock_guard lock(mu);
    if (sessions.erase(s) == 0) return;
    if (auto it = per_address.find(address); it != per_address.end() && --it->second <= 0) {
      per_address.erase(it);
    }
  }
  void Stop();

  size_t open_sessions() {
    std::lock_guard lock(mu);
    return sessions.size();
  }

  asio::io_context& io;
  tcp::acceptor acceptor;
  asio::steady_timer retry;  // after a failed accept (EMFILE): try again later, do not spin
  HttpServerOptions options;
  HttpBackend* backend;
  std::mutex mu;
  std::map<Session*, std::weak_ptr<Session>> sessions;
  std::map<std::string, int> per_address;  // open sessions by remote address
  bool stopped = false;
  int64_t refused = 0;  // connections turned away (max_connections)
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<HttpServer::Impl> server)
      : stream_(std::move(socket)), server_(std::move(server)), heartbeat_(server_->io) {
    beast::error_code ec;
    auto ep = stream_.socket().remote_endpoint(ec);
    if (!ec) {
      address_ = ep.address().to_string();
      peer_ = address_ + ":" + std::to_string(ep.port());
    }
  }
  ~Session() { server_->Unregister(this, address_); }

  void Start() {
    server_->Register(this, weak_from_this(), address_);
    ReadHeader();
  }

  bool closed() const { return closed_; }
  // Waiting for a request with nothing of it read: since when (nullopt: busy).
  std::optional<std::chrono::steady_clock::time_point> idle_since() const {
    if (closed_ || !waiting_ || buffer_.size() > 0) return std::nullopt;
    return waiting_since_;
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    if (stream_id_ >= 0) server_->backend->CloseStream(stream_id_);
    heartbeat_.cancel();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

 private:
  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(server_->options.max_header_bytes));
    parser_->body_limit(server_->options.max_body_bytes);
    stream_.expires_after(requests_ == 0 ? kFirstHeaderTimeout : kKeepAliveTimeout);
    waiting_ = true;
    waiting_since_ = std::chrono::steady_clock::now();
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  bool HandleReadError(beast::error_code ec) {
    if (!ec) return false;
    if (ec == http::error::body_limit) {
      Fail(
          413, "payload_too_large",
          "request body larger than " + std::to_string(server_->options.max_body_bytes) + " bytes");
    } else if (ec == http::error::header_limit) {
      Fail(431, "header_too_large",
           "request headers larger than " + std::to_string(server_->options.max_header_bytes) +
               " bytes");
    } else if (ec.category() == beast::error_code(http::error::end_of_stream).category() &&
               ec != http::error::end_of_stream && ec != http::error::partial_message) {
      Fail(400, "bad_request", "malformed HTTP request: " + ec.message());
    } else {
      Close();  // EOF, reset, timeout
    }
    return true;
  }

  void OnHeader(beast::error_code ec) {
    waiting_ = false;
    ++requests_;
    if (HandleReadError(ec)) return;
    auto& req = parser_->get();
    version_ = req.version();
    if (auto len = parser_->content_length(); len && *len > server_->options.max_body_bytes) {
      Fail(
          413, "payload_too_large",
          "request body larger than " + std::to_string(server_->options.max_body_bytes) + " bytes");
      return;
    }
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      auto cont =
          std::make_shared<http::response<http::empty_body>>(http::status::continue_, version_);
      http::async_write(stream_, *cont,
                        [self = shared_from_this(), cont](beast::error_code ec, size_t) {
                          if (ec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    stream_.expires_after(kReadTimeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRequest(ec); });
  }

  void OnRequest(beast::error_code ec) {
    if (HandleReadError(ec)) return;
    auto& req = parser_->get();
    keep_alive_ = req.keep_alive();
    HttpRequest r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    r.authorization = std::string(req[http::field::authorization]);
    r.body = std::move(req.body());
    r.peer = peer_;
    r.cookie = std::string(req[http::field::cookie]);
    r.origin = std::string(req[http::field::origin]);
    r.host = std::string(req[http::field::host]);
    r.requested_with = std::string(req["X-Requested-With"]);
    r.forwarded_proto = std::string(req["X-Forwarded-Proto"]);
    r.content_type = std::string(req[http::field::content_type]);
    r.accept = std::string(req[http::field::accept]);
    stream_.expires_never();
    auto& io = server_->io;
    if (r.target == kStreamPath || r.target.starts_with(std::string(kStreamPath) + "?")) {
      std::weak_ptr<Session> weak = weak_from_this();
      server_->backend->OpenStream(
          std::move(r),
          [weak, &io](std::string frame) {
            asio::post(io, [weak, frame = std::move(frame)]() mutable {
              if (auto s = weak.lock()) s->QueueFrame(std::move(frame));
            });
          },
          [self = shared_from_this(), &io](std::variant<int64_t, HttpResponse> opened) {
            asio::post(io, [self, opened = std::move(opened)]() mutable {
              self->OnStreamOpened(std::move(opened));
            });
          });
      return;
    }
    server_->backend->Handle(std::move(r), [self = shared_from_this(), &io](HttpResponse resp) {
      asio::post(io, [self, resp = std::move(resp)]() mutable { self->Write(std::move(resp)); });
    });
  }

  void Write(HttpResponse r, bool close = false) {
    if (closed_) return;
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(version_);
    res->result(static_cast<unsigned>(r.status));
    res->set(http::field::server, "podsched");
    res->set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) res->set(k, v);
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive_ && !close);
    res->prepare_payload();
    stream_.expires_after(kReadTimeout);
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code ec, size_t) {
                        if (ec) return self->Close();
                        if (!res->keep_alive()) return self->Drain();
                        self->ReadHeader();
                      });
  }

  // Answers a request that cannot be read further, then closes the connection gracefully.
  void Fail(int status, std::string_view code, std::string message) {
    HttpResponse r;
    r.status = status;
    r.body = ErrorJson(code, message);
    server_->backend->CountRejected(status);
    Write(std::move(r), true);
  }

  // After a final response: stop sending, discard what the client still sends (so it reads the
  // response instead of a reset), and close at EOF or after a timeout.
  void Drain() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(std::chrono::seconds(5));
    drain_buf_.resize(64 << 10);
    stream_.async_read_some(asio::buffer(drain_buf_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > (64u << 20)) return self->Close();
                              self->Drain();
                            });
  }

  void OnStreamOpened(std::variant<int64_t, HttpResponse> opened) {
    if (auto* error = std::get_if<HttpResponse>(&opened)) {
      Write(std::move(*error));
      return;
    }
    stream_id_ = std::get<int64_t>(opened);
    if (closed_) {
      server_->backend->CloseStream(stream_id_);
      return;
    }
    // No chunked encoding: the body is the stream until the connection closes.
    frames_.push_front(
        "HTTP/1.1 200 OK\r\nServer: podsched\r\nContent-Type: text/event-stream\r\n"
        "Cache-Control: no-cache\r\nConnection: close\r\n\r\n: podsched event stream\n\n");
    WriteFrames();
    Heartbeat();
    WatchForClose();
  }

  void QueueFrame(std::string frame) {
    if (closed_) return;
    if (frame.empty()) {  // the backend ended the stream: close once the frames are written
      ending_ = true;
      return WriteFrames();
    }
    if (frames_.size() >= kMaxQueuedFrames) return Close();  // a client that does not read
    frames_.push_back(std::move(frame));
    WriteFrames();
  }

  void WriteFrames() {
    if (ending_ && !writing_ && frames_.empty() && !closed_) {
      stream_id_ = -1;  // the backend has forgotten it already
      return Close();
    }
    if (writing_ || frames_.empty() || closed_) return;
    writing_ = true;
    asio::async_write(stream_.socket(), asio::buffer(frames_.front()),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        self->writing_ = false;
                        if (ec) return self->Close();
                        self->frames_.pop_front();
                        self->WriteFrames();
                      });
  }

  void Heartbeat() {
    heartbeat_.expires_after(kHeartbeat);
    heartbeat_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_) return;
      self->QueueFrame(": keep-alive\n\n");
      self->Heartbeat();
    });
  }

  void WatchForClose() {
    drain_buf_.resize(4096);
    stream_.socket().async_read_some(asio::buffer(drain_buf_),
                                     [self = shared_from_this()](beast::error_code ec, size_t) {
                                       if (ec) return self->Close();
                                       self->WatchForClose();
                                     });
  }

  beast::tcp_stream stream_;
  std::shared_ptr<HttpServer::Impl> server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  asio::steady_timer heartbeat_;
  std::string address_;  // the remote address, without the port
  std::string peer_;
  bool waiting_ = false;  // for a request's header
  std::chrono::steady_clock::time_point waiting_since_{};
  int64_t requests_ = 0;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool closed_ = false;
  int64_t stream_id_ = -1;
  std::deque<std::string> frames_;
  bool writing_ = false;
  bool ending_ = false;
  std::vector<char> drain_buf_;
  size_t drained_ = 0;
};

void HttpServer::Impl::Accept() {
  acceptor.async_accept(io, [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (self->stopped) return;
    if (ec) {
      // Out of file descriptors (or another accept error): the pending connection stays in the
      // backlog; accepting again at once would spin at 100% CPU.
      spdlog::warn("http: accept failed: {}; retrying in 100 ms", ec.message());
      self->retry.expires_after(std::chrono::milliseconds(100));
      self->retry.async_wait([self](beast::error_code) {
        if (!self->stopped) self->Accept();
      });
      return;
    }
    beast::error_code ep_ec;
    const auto remote = socket.remote_endpoint(ep_ec);
    const std::string why = self->Admit(ep_ec ? std::string() : remote.address().to_string());
    if (!why.empty()) {
      // Say so in one short write and close (the client may retry).
      const std::string body = ErrorJson("unavailable", why + "; retry later");
      const std::string busy =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
          "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\n\r\n" + body;
      beast::error_code ignored;
      socket.non_blocking(true, ignored);
      socket.write_some(asio::buffer(busy), ignored);
      socket.shutdown(tcp::socket::shutdown_both, ignored);
      socket.close(ignored);
      ++self->refused;
    } else {
      std::make_shared<Session>(std::move(socket), self)->Start();
    }
    self->Accept();
  });
}

std::string HttpServer::Impl::Admit(const std::string& address) {
  std::shared_ptr<Session> oldest_idle;
  {
    std::lock_guard lock(mu);
    const size_t cap = options.max_connections_per_address;
    if (auto it = per_address.find(address);
        cap > 0 && it != per_address.end() && static_cast<size_t>(it->second) >= cap) {
      return "too many open connections from " + address + " (" + std::to_string(cap) + ")";
    }
    if (sessions.size() < options.max_connections) return "";
    // Closed sessions stay registered until their last handler has run: not counted.
    size_t open = 0;
    std::optional<std::chrono::steady_clock::time_point> since;
    for (auto& [p, w] : sessions) {
      auto s = w.lock();
      if (!s || s->closed()) continue;
      ++open;
      auto idle = s->idle_since();
      if (idle && (!since || *idle < *since)) {
        since = idle;
        oldest_idle = std::move(s);
      }
    }
    if (open < options.max_connections) return "";
  }
  if (!oldest_idle) return "too many open connections";
  oldest_idle->Close();  // outside the lock: its handlers unregister it
  return "";
}

void HttpServer::Impl::Stop() {
  stopped = true;
  beast::error_code ec;
  acceptor.close(ec);
  retry.cancel();
  std::vector<std::shared_ptr<Session>> open;
  {
    std::lock_guard lock(mu);
    for (auto& [p, w] : sessions) {
      if (auto s = w.lock()) open.push_back(std::move(s));
    }
  }
  for (auto& s : open) s->Close();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(asio::io_context& io,
                                                      HttpServerOptions options,
                                                      HttpBackend* backend) {
  beast::error_code ec;
  auto address = asio::ip::make_address(options.address, ec);
  if (ec) return InvalidArgument("listen address '" + options.address + "': " + ec.message());
  tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
  auto impl = std::make_shared<Impl>(io, options, backend);
  auto& a = impl->acceptor;
  std::string where = options.address + ":" + std::to_string(options.port);
  a.open(endpoint.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (ec) return Unavailable("cannot listen on " + where + ": " + ec.message());
  a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Unavailable("cannot listen on " + where + ": " + ec.message());
  impl->Accept();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::~HttpServer() { Stop(); }

int HttpServer::port() const {
  beast::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

void HttpServer::Stop() {
  if (!impl_->stopped) impl_->Stop();
}

}  // namespace podsched::daemon
