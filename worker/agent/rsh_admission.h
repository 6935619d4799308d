// Whether the agent's rsh server runs a `podworker rsh` request (docs/bus.md, "podworker rsh"):
// only for a host it serves, for a job and epoch it has a Launch for (not killed, grace not run
// out), for a host of the job's slice, with a proof of that host's token, at most
// max_sessions_per_host times per host (1 orted under mpirun, ranks_per_host under exec).
//
// Tokens: the Launch carries a per-launch secret; host H's token is
// RshHostToken(secret, job, epoch, H), so a token is bound to one host and one epoch. It is
// never sent: the server opens each connection with a fresh random challenge, the client
// answers RshProof(token, challenge) — a proof seen on the wire is worthless on another
// connection, and the session count makes the token single use per session the launch needs. A request for an epoch newer
// than any seen waits up to 10 s for its Launch, at most 256 at once.
//
// Pure: the caller passes `now` (a MonotonicClock reading). Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "proto/bus.pb.h"

namespace podsched::agent {

inline constexpr Duration kRshLaunchWait = std::chrono::seconds(10);
inline constexpr size_t kMaxParkedRequests = 256;
// A connection must send its whole request within kRshRequestTimeout, and at most
// kMaxPendingRshConnections may be waiting to do so (a new one closes the oldest): without a
// token nobody can hold the rsh port.
inline constexpr Duration kRshRequestTimeout = std::chrono::seconds(5);
inline constexpr size_t kMaxPendingRshConnections = 128;
// Connections accepted per turn of the agent's poll loop (a connect flood waits in the backlog).
inline constexpr int kMaxAcceptsPerTurn = 64;

// What the agent knows of the request's (job, epoch) when it runs here.
struct RshJob {
  std::string secret;           // the Launch's rsh_token
  std::vector<int32_t> hosts;   // this agent's hosts of the job (the Launch's fleet ids), sorted
  bool killing = false;         // killed or out of grace
  int max_sessions_per_host = 1;
  std::map<int32_t, int> sessions;  // sessions started so far, by host
  int32_t first_host = 0;       // hosts are fleet ids: the agent's pod's are first_host apart
};

// Hex of HMAC-SHA256(secret, "podsched-rsh-v1|JOB|EPOCH|HOST").
std::string RshHostToken(std::string_view secret, int64_t job, int64_t epoch, int32_t host);
// Raw HMAC-SHA256(host_token, challenge).
std::string RshProof(std::string_view host_token, std::string_view challenge);
// Sessions a launch needs on each host: mpirun starts one orted per host; the exec launcher one
// `podworker rank` per rank.
int RshSessionsPerHost(bool exec_launcher, int ranks_per_host);
// Every session a launch opens on `hosts` (`per_host` each) has started, given the sessions
// started so far by host. Before that, a host whose first rank already ended is not done: its
// next rank's session may still be on its way.
bool EverySessionStarted(const std::map<int32_t, int>& started, const std::vector<int32_t>& hosts,
                         int per_host);

struct RshContext {
  std::vector<int32_t> agent_hosts;  // sorted
  std::string agent_id;
  std::optional<RshJob> job;         // the running launch of the request's (job, epoch)
  int64_t highest_epoch = 0;         // of the request's job, on this agent
  size_t parked = 0;                 // requests waiting for their Launch now
  std::string challenge;             // the one this connection was sent
};

struct RshDecision {
  enum Kind {
    kRun,     // start the command
    kPark,    // wait for the Launch until `park_until`, then ask again
    kWait,    // still waiting (parked earlier)
    kRefuse,  // exit 255 with `reason`
  };
  Kind kind = kRefuse;
  std::string reason;
  MonotonicTime park_until{};
};

// `parked_until`: set when the request was parked earlier.
RshDecision AdmitRshRequest(const bus::RshRequest& request, const RshContext& context,
                            std::optional<MonotonicTime> parked_until, MonotonicTime now);

// "job 7 epoch 2 host 4", for messages about a request.
std::string DescribeRshRequest(const bus::RshRequest& request);

}  // namespace podsched::agent
