#include "scheduler/daemon/pods_api.h"

#include "api.pb.h"
#include "scheduler/daemon/api_response.h"
#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/visibility.h"

namespace podsched::daemon {
namespace {

// The pod as `who` may see it.
api::Pod PodFor(const ApiView& view, const Principal& who) {
  api::Pod pod = PodToProto(view.scheduler);
  for (auto& h : *pod.mutable_hosts()) {
    const HostHealth& health = view.bus.hosts()[static_cast<size_t>(h.id())];
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
  api::PodList list;
  *list.add_pods() = PodFor(view, who);
  return JsonResponse(list);
}

HttpResponse GetPod(const ApiView& view, ApiCalls&, const Principal& who,
                    const ApiRequest& request) {
  const std::string& name = request.params.at(0);
  const std::string& only = view.scheduler.fleet().pod(0).name();  // a fleet of one (config.cc)
  if (name != only) {
    return ErrorResponse(404, "not_found", "no pod '" + name + "'; pods: " + only);
  }
  return JsonResponse(PodFor(view, who));
}

}  // namespace podsched::daemon
