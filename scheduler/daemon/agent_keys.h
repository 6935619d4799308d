// The worker bus's CURVE keys in podsched's data dir (docs/deploy.md, "Keys and enrolment"):
//
//   <data_dir>/bus.key      podsched's key pair (public-key/secret-key lines, common/key_file.h),
//                           created on first start unless `bus.curve: off`; mode 0600
//   <data_dir>/agents.keys  enrolled agents, one `AGENT_ID PUBLIC_KEY [[POD:]HOSTS]` a line,
//                           HOSTS the hosts it may register ("0-15", common/host_list.h, by
//                           the pod's own ids; absent: any host), POD the pod they are of
//                           ("dev-007:0"; absent: any pod); mode 0600.
//                           Written only by `podsched agent enroll|revoke` (under a lock file,
//                           atomically); the running daemon re-reads it when it changes
//                           (bus_server.h), so an enrolment or a revocation needs no restart.
//
// Parse/Format are pure; the rest does file I/O. Thread-safe (no shared state; concurrent
// enrol/revoke calls serialize on <data_dir>/agents.keys.lock).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/key_file.h"
#include "common/status.h"

namespace podsched::daemon {

struct EnrolledAgent {
  std::string agent_id;
  std::string public_key;  // Z85
  // The hosts it may register, sorted (audit H6: a key bound only to an id let any enrolled
  // agent claim every unheld host, and receive every tenant's launches). nullopt: any host
  // (enrolled without --hosts).
  std::optional<std::vector<int32_t>> hosts;
  // With hosts: the pod they are of (on a fleet, host 0 is a host of every pod). Empty: any pod
  // (enrolled without --pod, as before fleets).
  std::string pod{};
};

// What an enrolment allows an agent to register (BusLogic::SetEnrolledHosts): `hosts` of `pod`
// (empty: of any pod).
struct HostEnrolment {
  std::string pod;
  std::vector<int32_t> hosts;
};

std::string ServerKeyPath(const std::string& data_dir);
std::string AgentKeysPath(const std::string& data_dir);

// Errors name the line. Each agent id and each key at most once.
Result<std::vector<EnrolledAgent>> ParseAgentKeys(std::string_view text);
std::string FormatAgentKeys(const std::vector<EnrolledAgent>& agents);
// A missing file is no agent.
Result<std::vector<EnrolledAgent>> ReadAgentKeys(const std::string& path);

// Makes a new CURVE key pair (public_key and secret_key set): zmq_curve_keypair in podsched,
// a fake in tests.
using KeyGenerator = std::function<Result<KeyFile>()>;

// <data_dir>/bus.key, created (mode 0600, atomic) when missing; `created` tells which.
Result<KeyFile> LoadOrCreateServerKey(const std::string& data_dir, const KeyGenerator& keygen,
                                      bool* created);

// Enrols `agent_id`: a new key pair, its public key bound to the id (and to `hosts` of `pod`;
// nullopt: any host; empty pod: any pod) in agents.keys, and the agent's key file (its id, `bus`, the server's public key,
// its key pair) returned for the caller to hand over. An id already enrolled is kAlreadyExists
// (revoke it first).
Result<KeyFile> EnrollAgent(const std::string& data_dir, const std::string& agent_id,
                            const std::string& bus, const KeyGenerator& keygen,
                            std::optional<std::vector<int32_t>> hosts = std::nullopt,
                            std::string pod = "");
// Audit M8: enrolling as root in the data dir of a daemon that runs as its own account wrote a
// root-owned 0600 agents.keys that the daemon could not read (it failed to start, or kept the old
// list). kFailedPrecondition, saying how to run it instead, when `data_dir` exists and is not
// this process's (effective uid); EnrollAgent and RevokeAgent check it first.
Status CheckDataDirOwner(const std::string& data_dir);

// Removes `agent_id` from agents.keys (kNotFound when it is not there). A connected agent's
// messages are dropped from the next re-read on (within a second); it cannot reconnect.
Status RevokeAgent(const std::string& data_dir, const std::string& agent_id);

}  // namespace podsched::daemon
