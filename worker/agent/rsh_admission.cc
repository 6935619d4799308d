#include "worker/agent/rsh_admission.h"

#include <algorithm>

namespace podsched::agent {
namespace {

// Compares in time independent of where the first difference is.
bool SameToken(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

RshDecision Refuse(std::string reason) { return {RshDecision::kRefuse, std::move(reason), {}}; }

}  // namespace

std::string DescribeRshRequest(const bus::RshRequest& r) {
  return "job " + std::to_string(r.job().job_id()) + " epoch " + std::to_string(r.job().epoch()) +
         " host " + std::to_string(r.host());
}

RshDecision AdmitRshRequest(const bus::RshRequest& req, const RshContext& ctx,
                            std::optional<MonotonicTime> parked_until, MonotonicTime now) {
  const std::string what = DescribeRshRequest(req);
  if (!std::binary_search(ctx.agent_hosts.begin(), ctx.agent_hosts.end(), req.host())) {
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
  if (!SameToken(ctx.job->token, req.token())) return Refuse(what + ": bad rsh token");
  if (!std::binary_search(ctx.job->hosts.begin(), ctx.job->hosts.end(), req.host())) {
    return Refuse(what + ": host not in the job's slice");
  }
  if (req.argv().empty()) return Refuse(what + ": empty command");
  return {RshDecision::kRun, "", {}};
}

}  // namespace podsched::agent
