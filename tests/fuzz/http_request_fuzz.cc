// What podsched parses of an HTTP request itself (Beast frames the request; see http_server.cc):
// the target's path and query (ParseTarget, SplitPath), the route lookup (ApiRouter().Match),
// integer query values (ParseInt), and the credential headers (AuthenticateRequest: Authorization,
// Cookie, Origin, Host, X-Requested-With, X-Forwarded-Proto). No server is started.
//
// Input: a request line "METHOD TARGET", then header lines "Name: value", then an empty line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "scheduler/daemon/account_registry.h"
#include "scheduler/daemon/api_response.h"
#include "scheduler/daemon/api_routes.h"
#include "scheduler/daemon/auth.h"
#include "scheduler/daemon/http_types.h"
#include "scheduler/daemon/web_session.h"

using namespace podsched;

namespace {

// Cuts the next line (without "\n" or "\r\n") off `rest`.
std::string_view NextLine(std::string_view& rest) {
  const size_t nl = rest.find('\n');
  std::string_view line = rest.substr(0, nl);
  rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  if (line.ends_with('\r')) line.remove_suffix(1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const daemon::Router* const kRouter = new daemon::Router(daemon::ApiRouter());
  static core::InMemoryAccountRepository* const kStore = new core::InMemoryAccountRepository();
  static const daemon::AccountRegistry* const kAccounts = new daemon::AccountRegistry(
      {daemon::UserConfig{.name = "alice",
                          .token_sha256 = Sha256Hex("t-alice"),
                          .admin = false,
                          .unix_user = ""}},
      kStore);
  std::string_view rest(reinterpret_cast<const char*>(data), size);

  daemon::HttpRequest request;
  const std::string_view request_line = NextLine(rest);
  const size_t space = request_line.find(' ');
  request.method = std::string(request_line.substr(0, space));
  if (space != std::string_view::npos) request.target = std::string(request_line.substr(space + 1));
  while (!rest.empty()) {
    const std::string_view line = NextLine(rest);
    if (line.empty()) break;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    std::string value(line.substr(colon + 1));
    value.erase(0, value.find_first_not_of(' '));
    if (name == "Authorization") request.authorization = value;
    if (name == "Cookie") request.cookie = value;
    if (name == "Origin") request.origin = value;
    if (name == "Host") request.host = value;
    if (name == "X-Requested-With") request.requested_with = value;
    if (name == "X-Forwarded-Proto") request.forwarded_proto = value;
  }
  request.body = std::string(rest);

  const daemon::ParsedTarget target = daemon::ParseTarget(request.target);
  (void)daemon::SplitPath(target.path);
  for (const auto& [key, value] : target.query) (void)daemon::ParseInt(value);
  (void)kRouter->Match(request.method, target.path);
  (void)daemon::CookieValue(request.cookie, daemon::kSessionCookie);
  daemon::WebSessions sessions;
  (void)daemon::AuthenticateRequest(request, *kAccounts, sessions, TimePoint{});
  (void)daemon::RequestIsHttps(request);
  return 0;
}
