#include "scheduler/ctl/admin_commands.h"

#include <termios.h>
#include <unistd.h>

#include <cctype>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "scheduler/ctl/client_config.h"
#include "scheduler/ctl/reply.h"
#include "scheduler/ctl/terminal_text.h"

namespace podsched::ctl {
namespace {

// The secret alone on stdout, what it is on stderr.
int PrintIssued(const api::NewToken& t) {
  std::cout << t.secret() << std::endl;
  std::cerr << "podctl: token " << t.token().id() << " for " << t.token().user()
            << (t.token().expires().empty() ? " (never expires)"
                                            : " (expires " + t.token().expires() + ")")
            << "; it is shown only now: store it safely (podctl login reads it)\n";
  return kExitOk;
}

std::string Cell(std::string_view s) { return s.empty() ? "-" : TerminalSafe(std::string(s)); }

// Restores the terminal's echo if the user presses Ctrl-C at the prompt.
termios saved_termios;
void RestoreEchoAndExit(int) {
  tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(130);
}

std::expected<std::string, CallError> ReadToken(bool from_stdin) {
  const bool tty = isatty(STDIN_FILENO);
  if (!tty && !from_stdin) {
    return std::unexpected(CallError{
        kExitUsage, "stdin is not a terminal: pass --token-stdin to read the token from it"});
  }
  std::string token;
  if (tty) {
    std::cerr << "Token: " << std::flush;
    tcgetattr(STDIN_FILENO, &saved_termios);
    termios quiet = saved_termios;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    auto previous = std::signal(SIGINT, RestoreEchoAndExit);
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    std::getline(std::cin, token);
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
    std::signal(SIGINT, previous);
    std::cerr << "\n";
  } else {
    std::getline(std::cin, token);
  }
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front()))) {
    token.erase(0, 1);
  }
  if (token.empty()) return std::unexpected(CallError{kExitUsage, "no token given"});
  if (token.size() > 4096 || TerminalSafe(token) != token) {
    return std::unexpected(CallError{kExitUsage, "that is not a token (control characters or "
                                                 "more than 4096 bytes)"});
  }
  return token;
}

}  // namespace

std::string UsersTable(const api::UserList& list) {
  std::ostringstream out;
  out << std::left << std::setw(20) << "NAME" << std::setw(7) << "ROLE" << std::setw(8) << "SOURCE"
      << std::setw(10) << "STATE" << std::setw(14) << "UNIX_USER" << std::setw(7) << "JOBS"
      << "CREATED\n";
  for (const auto& u : list.users()) {
    out << std::left << std::setw(20) << Cell(u.name()) << std::setw(7) << u.role() << std::setw(8)
        << u.source() << std::setw(10) << (u.disabled() ? "disabled" : "enabled") << std::setw(14)
        << Cell(u.unix_user()) << std::setw(7) << u.active_jobs() << Cell(u.created()) << "\n";
  }
  return out.str();
}

std::string TokensTable(const api::TokenList& list) {
  std::ostringstream out;
  out << std::left << std::setw(6) << "ID" << std::setw(16) << "USER" << std::setw(18) << "LABEL"
      << std::setw(9) << "STATE" << std::setw(29) << "CREATED" << std::setw(29) << "EXPIRES"
      << "CREATED_BY\n";
  for (const auto& t : list.tokens()) {
    out << std::left << std::setw(6) << t.id() << std::setw(16) << Cell(t.user()) << std::setw(18)
        << Cell(t.label()) << std::setw(9) << t.state() << std::setw(29) << Cell(t.created())
        << std::setw(29) << (t.expires().empty() ? "never" : t.expires()) << Cell(t.created_by())
        << "\n";
  }
  return out.str();
}

int UserAdd(ApiClient& api, const UserAddOptions& o) {
  nlohmann::json body = {{"name", o.name}, {"role", o.admin ? "admin" : "user"}};
  if (!o.unix_user.empty()) body["unix_user"] = o.unix_user;
  auto reply = api.CallOk("POST", "/api/v1/users", body.dump());
  if (!reply) return Report(reply.error());
  auto created = Parse<api::NewToken>(*reply);
  if (!created) return Report(created.error());
  std::cerr << "podctl: created user " << created->user().name() << " (role "
            << created->user().role()
            << (created->user().unix_user().empty() ? ""
                                                    : ", unix_user " + created->user().unix_user())
            << ")\n";
  return PrintIssued(*created);
}

int UserList(ApiClient& api, const std::string& output) {
  auto reply = api.CallOk("GET", "/api/v1/users");
  if (!reply) return Report(reply.error());
  auto list = Parse<api::UserList>(*reply);
  if (!list) return Report(list.error());
  if (output != "table") {
    Print(*list, output);
  } else {
    std::cout << UsersTable(*list);
  }
  return kExitOk;
}

int UserSetDisabled(ApiClient& api, const std::string& name, bool disabled) {
  if (name.empty() || name.find('/') != std::string::npos || name.find('?') != std::string::npos) {
    std::cerr << "podctl: '" << TerminalSafe(name) << "' is not a user name\n";
    return kExitUsage;
  }
  auto reply = api.CallOk("POST", "/api/v1/users/" + name + (disabled ? "/disable" : "/enable"));
  if (!reply) return Report(reply.error());
  std::cout << "user " << name
            << (disabled ? " disabled: every token of it fails from now on (its jobs are left "
                           "alone)"
                         : " enabled")
            << "\n";
  return kExitOk;
}

int TokenCreate(ApiClient& api, const TokenCreateOptions& o) {
  int64_t seconds = 0;
  if (!o.expires.empty()) {
    auto parsed = ParseExpiry(o.expires);
    if (!parsed) {
      std::cerr << "podctl: " << parsed.error().message() << "\n";
      return kExitUsage;
    }
    seconds = *parsed;
  }
  nlohmann::json body = {{"user", o.user}, {"label", o.label}, {"expires_in_seconds", seconds}};
  auto reply = api.CallOk("POST", "/api/v1/tokens", body.dump());
  if (!reply) return Report(reply.error());
  auto created = Parse<api::NewToken>(*reply);
  if (!created) return Report(created.error());
  return PrintIssued(*created);
}

int TokenList(ApiClient& api, const std::string& user, const std::string& output) {
  std::string path = "/api/v1/tokens";
  if (!user.empty()) {
    if (user.find_first_of("&#?% /") != std::string::npos) {
      std::cerr << "podctl: '" << TerminalSafe(user) << "' is not a user name\n";
      return kExitUsage;
    }
    path += "?user=" + user;
  }
  auto reply = api.CallOk("GET", path);
  if (!reply) return Report(reply.error());
  auto list = Parse<api::TokenList>(*reply);
  if (!list) return Report(list.error());
  if (output != "table") {
    Print(*list, output);
  } else {
    std::cout << TokensTable(*list);
  }
  return kExitOk;
}

int TokenRevoke(ApiClient& api, const std::string& id) {
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    std::cerr << "podctl: '" << TerminalSafe(id)
              << "' is not a token id (the ID column of podctl admin token list)\n";
    return kExitUsage;
  }
  auto reply = api.CallOk("POST", "/api/v1/tokens/" + id + "/revoke");
  if (!reply) return Report(reply.error());
  std::cout << "token " << id << " revoked: it fails from now on, dashboard sessions and event "
            << "streams made with it included\n";
  return kExitOk;
}

int Login(const LoginOptions& o) {
  std::string token = o.token;
  if (!token.empty()) {
    std::cerr << "podctl: using the token of --token / POD_TOKEN\n";
  } else {
    auto read = ReadToken(o.token_stdin);
    if (!read) return Report(read.error());
    token = std::move(*read);
  }
  ApiClient api(o.server, token);
  auto reply = api.Call("GET", "/api/v1/whoami");
  if (!reply) return Report(CallError{kExitUnreachable, reply.error().message()});
  if (reply->status != 200) {
    return Report(CallError{ExitCodeForStatus(reply->status),
                            "login failed, nothing written: " +
                                TerminalSafe(ReplyErrorMessage(*reply))});
  }
  auto who = Parse<api::User>(reply->body);
  if (!who) return Report(who.error());
  const std::string path = ClientConfigPath();
  if (Status s = WriteClientConfig(path, ClientConfig{api.server(), token}); !s.ok()) {
    return Report(CallError{kExitOther, s.message()});
  }
  std::cout << "logged in to " << api.server() << " as " << who->name() << " (" << who->role()
            << (who->token_expires().empty() ? "" : "; the token expires " + who->token_expires())
            << "); saved to " << path << "\n";
  return kExitOk;
}

}  // namespace podsched::ctl
