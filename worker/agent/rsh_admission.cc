#include "worker/agent/rsh_admission.h"

#include <algorithm>

#include "common/hash.h"

namespace podsched::agent {
namespace {

RshDecision Refuse(std::string reason) { return {RshDecision::kRefuse, std::move(reason), {}}; }

}  // namespace

std::string RshHostToken(std::string_view secret, int64_t job, int64_t epoch, int32_t host) {
  return HexEncode(HmacSha256(secret, "podsched-rsh-v1|" + std::to_string(job) + "|" +
                                          std::to_string(epoch) + "|" + std::to_string(host)));
}

std::string RshProof(std::string_view host_token, std::string_view challenge) {
  return HmacSha256(host_token, challenge);
}

int RshSessionsPerHost(bool exec_launcher, int ranks_per_host) {
  return exec_launcher ? std::max(1, ranks_per_host) : 1;
}

bool EverySessionStarted(const std::map<int32_t, int>& started, const std::vector<int32_t>& hosts,
                         int per_host) {
  return std::all_of(hosts.begin(), hosts.end(), [&](int32_t h) {
    auto it = started.find(h);
    return it != started.end() && it->second >= per_host;
  });
}

std::string DescribeRshRequest(const bus::RshRequest& r) {
  return "job " + std::to_string(r.job().job_id()) + " epoch " + std::to_string(r.job().epoch()) +
         " host " + std::to_string(r.host());
}

RshDecision AdmitRshRequest(const bus::RshRequest& req, const RshContext& ctx,
                            std::optional<MonotonicTime> parked_until, MonotonicTime now) {
  const std::string what = DescribeRshRequest(req);
  // The request names a fleet id (bus.proto, Launch.hosts): whose host it is follows from the
  // Launch's first_host, so a request that arrives before its Launch is judged when it comes.
  if (ctx.job && !std::binary_search(ctx.agent_hosts.begin(), ctx.agent_hosts.end(),
                                     req.host() - ctx.job->first_host)) {
    return Refuse(what + ": host " + std::to_string(req.host()) + " is not served by agent " +
                  ctx.agent_id);
  }
  if (!ctx.job && req.job().epoch() > ctx.highest_epoch) {
    if (!parked_until) {
      if (ctx.parked >= kMaxParkedRequests) {
        return Refuse(what + ": too many requests waiting for their Launch");
      }
      return {RshDecision::kPark, "", now + kRshLaunchWait};
    }
    if (now < *parked_until) return {RshDecision::kWait, "", *parked_until};
    return Refuse(what + ": no Launch of that job and epoch arrived within " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kRshLaunchWait)
                                     .count()) +
                  " s");
  }
  if (!ctx.job || ctx.job->killing) {
    return Refuse(what + ": no running launch of that job and epoch here");
  }
  if (!std::binary_search(ctx.job->hosts.begin(), ctx.job->hosts.end(), req.host())) {
    return Refuse(what + ": host not in the job's slice");
  }
  const std::string want = RshProof(
      RshHostToken(ctx.job->secret, req.job().job_id(), req.job().epoch(), req.host()),
      ctx.challenge);
  if (ctx.challenge.empty() || !ConstantTimeEqual(want, req.proof())) {
    return Refuse(what + ": bad rsh token (not this host's and epoch's)");
  }
  const auto used = ctx.job->sessions.find(req.host());
  if (used != ctx.job->sessions.end() && used->second >= ctx.job->max_sessions_per_host) {
    return Refuse(what + ": the token was used for its " +
                  std::to_string(ctx.job->max_sessions_per_host) + " session(s) already");
  }
  if (req.argv().empty()) return Refuse(what + ": empty command");
  return {RshDecision::kRun, "", {}};
}

}  // namespace podsched::agent
