#include "scheduler/daemon/admin_api.h"

#include <map>
#include <set>
#include <string>

#include "api.pb.h"
#include "scheduler/daemon/api_response.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {

HttpResponse ListQuotas(const ApiView& view, ApiCalls&, const Principal& who, const ApiRequest&) {
  std::set<std::string> names;
  if (who.admin) {
    for (const auto& u : view.accounts.Users()) names.insert(u.account.name.value());
    for (const auto& [user, q] : view.config.quotas) names.insert(user);
    for (const UserName& user : view.scheduler.KnownUsers()) names.insert(user.value());
  } else {
    names.insert(who.user);
  }
  api::QuotaList out;
  for (const auto& name : names) {
    auto* q = out.add_quotas();
    core::Quota quota = view.scheduler.QuotaOf(UserName(name));
    core::QuotaUsage used = view.scheduler.UsageOf(UserName(name));
    q->set_user(name);
    q->set_on_demand_cores(quota.on_demand_cores);
    q->set_preemptible_cores(quota.preemptible_cores);
    q->set_on_demand_cores_used(used.on_demand_cores);
    q->set_preemptible_cores_used(used.preemptible_cores);
    q->set_egress_usd(view.scheduler.EgressUsdOf(UserName(name)));
  }
  return JsonResponse(out);
}

HttpResponse PutQuota(const ApiView& view, ApiCalls& calls, const Principal& who,
                      const ApiRequest& request) {
  if (!who.admin) return ErrorResponse(403, "permission_denied", "only an admin sets quotas");
  api::Quota in;
  if (Status s = ParseJson(request.http.body, {view.config.limits.max_json_depth, 256}, &in);
      !s.ok()) {
    return StatusError(s);
  }
  if (in.user().empty() || HasControlCharacters(in.user()) || in.user().size() > 64) {
    return ErrorResponse(400, "invalid_argument", "user must be a name of 1..64 characters");
  }
  if (in.on_demand_cores() < 0 || in.preemptible_cores() < 0) {
    return ErrorResponse(400, "invalid_argument", "quotas must be >= 0 cores");
  }
  core::Quota quota{in.on_demand_cores(), in.preemptible_cores()};
  if (Status s = calls.SetQuota(UserName(in.user()), quota, request.now); !s.ok()) {
    return CoreError(s);
  }
  return ListQuotas(view, calls, who, request);
}

}  // namespace podsched::daemon
