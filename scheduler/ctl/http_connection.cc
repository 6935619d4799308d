#include "scheduler/ctl/http_connection.h"

#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>

namespace podsched::ctl {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct Url {
  bool tls = false;
  std::string host;
  std::string port;
};

Result<Url> ParseServer(const std::string& server) {
  Url u;
  std::string_view rest = server;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    u.tls = true;
  } else {
    return InvalidArgument("server '" + server + "' must start with http:// or https://");
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    rest = rest.substr(0, slash);  // a path after the authority is not used
  }
  std::string_view host = rest, port = u.tls ? "443" : "80";
  if (rest.starts_with('[')) {  // [IPv6]:port
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return InvalidArgument("server '" + server + "': bad [");
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') port = rest.substr(close + 2);
  } else if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  int n = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  if (host.empty() || ec != std::errc() || p != port.data() + port.size() || n < 1 || n > 65535) {
    return InvalidArgument("server '" + server + "' needs a host and a port of 1..65535");
  }
  u.host = host;
  u.port = port;
  return u;
}

Status Failed(const char* what, const beast::error_code& ec) {
  return Status(StatusCode::kUnavailable, std::string(what) + ": " + ec.message());
}

// The request and the reply over an open stream (tcp or TLS).
template <typename Stream>
Result<HttpConnection::Reply> Exchange(Stream& stream, const Url& url,
                                       const HttpConnection::Request& r,
                                       const HttpConnection::OnBody& on_body) {
  http::request<http::string_body> req{http::string_to_verb(r.method), r.target, 11};
  if (req.method() == http::verb::unknown) return InvalidArgument("unknown method " + r.method);
  req.set(http::field::host, url.host);
  req.set(http::field::user_agent, "podctl");
  req.set(http::field::connection, "close");
  for (const auto& [name, value] : r.headers) req.set(name, value);
  if (req.method() != http::verb::get) {
    req.body() = r.body;
    req.prepare_payload();
  }
  beast::error_code ec;
  http::write(stream, req, ec);
  if (ec) return std::unexpected(Failed("sending the request", ec));

  beast::flat_buffer buffer;
  HttpConnection::Reply reply;
  if (!on_body) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(256u << 20);
    http::read(stream, buffer, parser, ec);
    if (ec) return std::unexpected(Failed("reading the reply", ec));
    reply.status = static_cast<long>(parser.get().result_int());
    reply.body = std::move(parser.get().body());
    return reply;
  }
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  http::read_header(stream, buffer, parser, ec);
  if (ec) return std::unexpected(Failed("reading the reply", ec));
  reply.status = static_cast<long>(parser.get().result_int());
  if (reply.status >= 300) return reply;
  char chunk[16384];
  while (!parser.is_done()) {
    parser.get().body().data = chunk;
    parser.get().body().size = sizeof chunk;
    // read_some: what has arrived, not a full buffer (an event stream trickles).
    http::read_some(stream, buffer, parser, ec);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return std::unexpected(Failed("reading the stream", ec));
    const size_t n = sizeof chunk - parser.get().body().size;
    if (n > 0 && !on_body(std::string_view(chunk, n))) return reply;
  }
  return reply;
}

}  // namespace

Result<HttpConnection::Reply> HttpConnection::Send(const std::string& server,
                                                   const Request& request,
                                                   std::optional<std::chrono::seconds> timeout,
                                                   const OnBody& on_body) {
  auto url = ParseServer(server);
  if (!url) return std::unexpected(url.error());
  asio::io_context io;
  tcp::resolver resolver(io);
  beast::error_code ec;
  const auto endpoints = resolver.resolve(url->host, url->port, ec);
  if (ec) return std::unexpected(Failed(("resolving " + url->host).c_str(), ec));
  beast::tcp_stream tcp_stream(io);
  tcp_stream.expires_after(std::chrono::seconds(5));
  tcp_stream.connect(endpoints, ec);
  if (ec) return std::unexpected(Failed("connecting", ec));
  tcp_stream.socket().set_option(tcp::no_delay(true), ec);
  if (timeout) {
    tcp_stream.expires_after(*timeout);
  } else {
    tcp_stream.expires_never();
  }
  if (!url->tls) return Exchange(tcp_stream, *url, request, on_body);

  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.set_default_verify_paths(ec);
  ctx.set_verify_mode(asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> tls(std::move(tcp_stream), ctx);
  if (!SSL_set_tlsext_host_name(tls.native_handle(), url->host.c_str())) {
    return Internal("TLS: cannot set the server name " + url->host);
  }
  tls.set_verify_callback(asio::ssl::host_name_verification(url->host));
  tls.handshake(asio::ssl::stream_base::client, ec);
  if (ec) return std::unexpected(Failed("TLS handshake", ec));
  return Exchange(tls, *url, request, on_body);
}

}  // namespace podsched::ctl
