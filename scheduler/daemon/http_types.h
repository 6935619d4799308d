// The small request/response structs the HTTP server (http_server.cc, the only Beast code) hands
// to the API router. Handlers see only these, so they are testable without sockets.
//
// Value types; thread-safe to copy.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace podsched::daemon {

struct HttpRequest {
  std::string method;         // "GET", "POST", ...
  std::string target;         // "/api/v1/jobs?state=QUEUED"
  std::string authorization;  // the Authorization header, or empty
  std::string body;
  std::string peer;  // "127.0.0.1:53422", for logs
  // For the dashboard's cookie sessions and their CSRF checks (web_session.h). Default-initialized
  // so that HttpRequest{method, target, authorization, body, peer} stays warning-free.
  std::string cookie{};           // the Cookie header
  std::string origin{};           // the Origin header
  std::string host{};             // the Host header
  std::string requested_with{};   // the X-Requested-With header
  std::string forwarded_proto{};  // the X-Forwarded-Proto header (https behind a proxy)
  // The Content-Type and Accept headers: a body in protobuf's binary encoding, and a reply asked
  // for in it (json_util.h, kProtobufMediaType).
  std::string content_type{};
  std::string accept{};
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

// The path and the decoded query parameters of a request target. A repeated parameter keeps its
// last value.
struct ParsedTarget {
  std::string path;
  std::map<std::string, std::string> query;
};
// Splits and percent-decodes a target. Never fails: undecodable escapes are kept verbatim.
ParsedTarget ParseTarget(std::string_view target);

// Splits a path into its segments: "/api/v1/jobs/7" -> {"api", "v1", "jobs", "7"}.
std::vector<std::string> SplitPath(std::string_view path);

// Reason phrase of a status code ("Not Found").
std::string_view StatusReason(int status);

}  // namespace podsched::daemon
