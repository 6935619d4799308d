// Key files of the worker bus (docs/deploy.md, "Keys and enrolment"): text lines `name: value`,
// `#` comments. An agent's key file, written by `podsched agent enroll`, holds
//
//   agent-id: m1        the one agent id this key pair may serve as (podsched refuses others)
//   bus: tcp://10.0.0.10:8471
//   server-key: Z85     podsched's CURVE public key: pinned, never learned from the network
//   public-key: Z85     this agent's key pair
//   secret-key: Z85
//
// `podworker keygen` prints only the last two lines (the older, explicitly configured form);
// podsched's own key file (<data_dir>/bus.key) has the same two.
//
// Pure (text in, text out) except WritePrivateFile. Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace podsched {

struct KeyFile {
  std::string agent_id;    // empty: not bound (a keygen file)
  std::string bus;         // empty: not given
  std::string server_key;  // empty: not given
  std::string public_key;  // always set by ParseKeyFile
  std::string secret_key;  // always set by ParseKeyFile
};

// A 40-character Z85 text (a CURVE key).
bool IsZ85Key(std::string_view key);
// 1..64 of [A-Za-z0-9._-] (also what podworker accepts for --agent-id).
bool IsValidAgentId(std::string_view id);

// The worker bus routing id of one agent connection: "ID/NONCE", NONCE being 16 random bytes in
// hex, drawn once per socket (audit L9). podsched routes an agent id's messages to the routing
// id its last authenticated message came from; ZeroMQ lets a new connection take over a routing
// id (ROUTER_HANDOVER, which a reconnecting agent needs), and the nonce travels only inside the
// encrypted CURVE handshake, so no other connection can name the route to take it over.
std::string NewBusRoutingId(std::string_view agent_id);
// The agent id a bus routing id names: everything before the first '/' (all of it when there
// is none, as with a bare "ID"). Agent ids never hold '/'.
std::string_view AgentIdOfRoutingId(std::string_view routing_id);

// Errors name the line and what is expected; public-key and secret-key are required, unknown
// names are errors.
Result<KeyFile> ParseKeyFile(std::string_view text);
// `comment` (may be empty) goes first as `#` lines; then the set fields.
std::string FormatKeyFile(const KeyFile& keys, std::string_view comment);

// Writes `content` to `path` with mode 0600 atomically (a temporary file in the same
// directory, fsync, rename, fsync of the directory). `replace` false: fails with
// kAlreadyExists when `path` exists.
Status WritePrivateFile(const std::string& path, std::string_view content, bool replace);

}  // namespace podsched
