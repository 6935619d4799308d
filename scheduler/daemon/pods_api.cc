#include "scheduler/daemon/pods_api.h"

#include <algorithm>

#include "api.pb.h"
#include "scheduler/daemon/api_response.h"
#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/visibility.h"

namespace podsched::daemon {
namespace {

constexpr int kMaxPendingListed = 500;  // a reply stays small with a long queue

// `pod` (of pod `index`) as `who` may see it.
api::Pod ForUser(const ApiView& view, const Principal& who, int index, api::Pod pod) {
  const pod::Fleet& fleet = view.scheduler.fleet();
  for (auto& h : *pod.mutable_hosts()) {
    const HostId in_fleet = fleet.FleetHost(index, HostId(h.id()));
    const HostHealth& health = view.bus.hosts()[static_cast<size_t>(in_fleet.value())];
    // Which machine serves a host is the operators' business (audit L6), as /agents is
    // admin-only; whether it is healthy, and why not, is everyone's: their jobs wait on it.
    if (who.admin) h.set_agent_id(health.agent_id);
    h.set_health_reason(health.reason);
    const auto* job = h.job_id() ? view.scheduler.Find(JobId(h.job_id())) : nullptr;
    if (job != nullptr && !MaySee(who, *job)) h.set_job_id(0);  // held, not by whom
  }
  for (auto& a : *pod.mutable_allocations()) {
    if (MaySee(who, a.user())) continue;
    a.set_job_id(0);  // someone else's: where, not who
    a.set_user("");
  }
  google::protobuf::RepeatedPtrField<api::PendingJob> pending;
  for (auto& p : pod.pending()) {
    if (MaySee(who, p.user())) *pending.Add() = p;
  }
  pod.mutable_pending()->Swap(&pending);
  return pod;
}

}  // namespace

HttpResponse ListPods(const ApiView& view, ApiCalls&, const Principal& who, const ApiRequest&) {
  // Each pod lists its share of the queue: the reply stays bounded on a fleet of many devices.
  const int pods = view.scheduler.fleet().size();
  const int per_pod = std::max(10, kMaxPendingListed / pods);
  api::PodList list;
  std::vector<api::Pod> all = PodsToProto(view.scheduler, std::nullopt, per_pod);
  for (size_t i = 0; i < all.size(); ++i) {
    *list.add_pods() = ForUser(view, who, static_cast<int>(i), std::move(all[i]));
  }
  return JsonResponse(list);
}

HttpResponse GetPod(const ApiView& view, ApiCalls&, const Principal& who,
                    const ApiRequest& request) {
  const std::string& name = request.params.at(0);
  const pod::Fleet& fleet = view.scheduler.fleet();
  const std::optional<int> index = fleet.IndexOf(name);
  if (!index) return ErrorResponse(404, "not_found", fleet.NoPodNamed(name));
  std::vector<api::Pod> one = PodsToProto(view.scheduler, *index, kMaxPendingListed);
  return JsonResponse(ForUser(view, who, *index, std::move(one.front())));
}

}  // namespace podsched::daemon
