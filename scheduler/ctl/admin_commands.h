// podctl's account verbs (docs/podctl.md, "Users and tokens"): `admin user add|list|disable|
// enable`, `admin token create|list|revoke`, and `login`. Like commands.h, each returns the exit
// code and prints errors as one line on stderr.
//
// A token's secret is printed once, alone on stdout (TOKEN=$(podctl admin token create bob));
// everything said about it goes to stderr. `login` never prints the token.
#pragma once

#include <string>

#include "api.pb.h"
#include "scheduler/ctl/client.h"

namespace podsched::ctl {

struct UserAddOptions {
  std::string name;
  bool admin = false;
  std::string unix_user;
};

struct TokenCreateOptions {
  std::string user;     // empty: the caller
  std::string expires;  // ParseExpiry; empty: never
  std::string label;
};

struct LoginOptions {
  std::string server;  // resolved (--server, POD_SERVER, the config file, the default)
  std::string token;   // --token / POD_TOKEN if given: used instead of asking
  bool token_stdin = false;
};

int UserAdd(ApiClient& api, const UserAddOptions& o);
int UserList(ApiClient& api, const std::string& output);
int UserSetDisabled(ApiClient& api, const std::string& name, bool disabled);
int TokenCreate(ApiClient& api, const TokenCreateOptions& o);
int TokenList(ApiClient& api, const std::string& user, const std::string& output);
int TokenRevoke(ApiClient& api, const std::string& id);
// Reads the token (from a terminal without echo, or stdin with --token-stdin), checks it with
// GET /api/v1/whoami, and only then writes the config file (client_config.h).
int Login(const LoginOptions& o);

// Tables (pure; unit-tested).
std::string UsersTable(const api::UserList& list);
std::string TokensTable(const api::TokenList& list);

}  // namespace podsched::ctl
