#include "pod/fleet.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/check.h"
#include "common/host_list.h"

namespace podsched::pod {
namespace {

std::string GridText(const Pod& pod) {
  return std::string(SpecOf(pod.generation()).name) + " " + std::to_string(pod.host_rows()) +
         "x" + std::to_string(pod.host_cols());
}

Status UnknownHost(HostId host, int num_hosts) {
  return ToStatus(NotFound("no host " + std::to_string(host.value()) + " in the fleet (hosts 0.." +
                           std::to_string(num_hosts - 1) + ")"));
}

}  // namespace

std::string SomeNames(const std::vector<std::string>& names) {
  constexpr size_t kShown = 3;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) {
    out += (i == 0 ? "" : ", ") + names[i];
  }
  if (names.size() > kShown) out += " and " + std::to_string(names.size() - kShown) + " more";
  return out;
}

void Fleet::Add(Pod pod, std::string zone, PodClass job_class) {
  first_host_.push_back(num_hosts_);
  num_hosts_ += pod.num_hosts();
  pods_.push_back(std::move(pod));
  zones_.push_back(std::move(zone));
  classes_.push_back(job_class);
  if (job_class != PodClass::kAny) ++class_pods_;
}

std::string_view PodClassName(PodClass c) {
  switch (c) {
    case PodClass::kOnDemand: return "on-demand";
    case PodClass::kPreemptible: return "preemptible";
    case PodClass::kAny: break;
  }
  return "any";
}

Result<PodClass> ParsePodClass(std::string_view text) {
  for (PodClass c : {PodClass::kAny, PodClass::kOnDemand, PodClass::kPreemptible}) {
    if (text == PodClassName(c)) return c;
  }
  return InvalidArgument("'" + std::string(text).substr(0, 40) +
                         "' is not a job class; valid: any, on-demand, preemptible");
}

bool IsPodName(std::string_view name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
         });
}

Result<Fleet> Fleet::Create(const std::vector<FleetPodSpec>& pods) {
  if (pods.empty()) return InvalidArgument("a fleet needs at least one pod");
  Fleet fleet;
  std::set<std::string> names;
  for (const FleetPodSpec& spec : pods) {
    if (spec.name.empty()) {
      return InvalidArgument("pod " + std::to_string(fleet.size()) + " of the fleet has no name");
    }
    // Names go into URLs (/api/v1/pods/NAME), POD_SLICE ("NAME:COL,ROW:WxH") and the bus.
    if (!IsPodName(spec.name)) {
      return InvalidArgument("pod name '" + spec.name.substr(0, 80) +
                             "': expected 1-64 characters of A-Z a-z 0-9 . _ -");
    }
    if (!spec.zone.empty() && !IsPodName(spec.zone)) {
      return InvalidArgument("zone '" + spec.zone.substr(0, 80) + "' of pod " + spec.name +
                             ": expected 1-64 characters of A-Z a-z 0-9 . _ -");
    }
    if (!names.insert(spec.name).second) {
      return InvalidArgument("two pods of the fleet are named '" + spec.name +
                             "': pod names must be unique");
    }
    Result<Pod> pod = Pod::Create(spec.name, spec.generation, spec.host_rows, spec.host_cols);
    if (!pod) return std::unexpected(pod.error().WithContext("pod " + spec.name));
    fleet.Add(std::move(*pod), spec.zone, spec.job_class);
    if (fleet.num_hosts() > kMaxFleetHostId + 1) {
      return InvalidArgument("the fleet has more than " + std::to_string(kMaxFleetHostId + 1) +
                             " hosts with pod " + spec.name + "; split it among schedulers");
    }
  }
  return fleet;
}

Fleet Fleet::Of(Pod pod, std::string zone) {
  Fleet fleet;
  fleet.Add(std::move(pod), std::move(zone));
  return fleet;
}

std::optional<int> Fleet::IndexOf(std::string_view name) const {
  for (int i = 0; i < size(); ++i) {
    if (pods_[static_cast<size_t>(i)].name() == name) return i;
  }
  return std::nullopt;
}

Fleet::Located Fleet::Locate(HostId host) const {
  PODSCHED_CHECK(Contains(host));
  // The last pod whose first host is at or below `host`.
  auto it = std::upper_bound(first_host_.begin(), first_host_.end(), host.value());
  const int index = static_cast<int>(it - first_host_.begin()) - 1;
  return {index, HostId(host.value() - first_host(index))};
}

const HostStatus& Fleet::host(HostId host) const {
  const Located at = Locate(host);
  return pod(at.pod).host(at.in_pod);
}

std::vector<HostId> Fleet::HostsIn(const FleetPlacement& p) const {
  std::vector<HostId> hosts = pod(p.pod).HostsIn(p.rect);
  for (HostId& h : hosts) h = FleetHost(p.pod, h);
  return hosts;
}

std::string Fleet::HostName(HostId host) const {
  if (size() == 1 || !Contains(host)) return "host " + std::to_string(host.value());
  const Located at = Locate(host);
  return "host " + std::to_string(at.in_pod.value()) + " of pod " + pod(at.pod).name();
}

bool Fleet::CanHold(int index, const AcceleratorType& type, std::string_view zone,
                    std::string_view pod_name, std::optional<bool> preemptible) const {
  const Pod& p = pod(index);
  if (!zone.empty() && zones_[static_cast<size_t>(index)] != zone) return false;
  if (preemptible) {
    const PodClass c = classes_[static_cast<size_t>(index)];
    if (c == (*preemptible ? PodClass::kOnDemand : PodClass::kPreemptible)) return false;
  }
  if (!pod_name.empty() && p.name() != pod_name) return false;
  if (p.generation() != type.generation()) return false;
  const SliceShape s = type.shape();
  return (s.rows <= p.host_rows() && s.cols <= p.host_cols()) ||
         (s.cols <= p.host_rows() && s.rows <= p.host_cols());
}

std::vector<int> Fleet::PodsThatCanHold(const AcceleratorType& type, std::string_view zone,
                                        std::string_view pod,
                                        std::optional<bool> preemptible) const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i) {
    if (CanHold(i, type, zone, pod, preemptible)) out.push_back(i);
  }
  return out;
}

std::pair<int, std::string> Fleet::MostSlicesInOneZone(const AcceleratorType& type,
                                                       std::string_view zone,
                                                       std::string_view pod,
                                                       std::optional<bool> preemptible) const {
  const SliceShape shape = type.shape();
  std::map<std::string, int> per_zone;
  std::vector<std::string> order;
  for (int i : PodsThatCanHold(type, zone, pod, preemptible)) {
    const Pod& p = pods_[static_cast<size_t>(i)];
    const int upright = (p.host_rows() / shape.rows) * (p.host_cols() / shape.cols);
    const int rotated = (p.host_rows() / shape.cols) * (p.host_cols() / shape.rows);
    auto [it, fresh] = per_zone.try_emplace(zones_[static_cast<size_t>(i)], 0);
    if (fresh) order.push_back(it->first);
    it->second += std::max(upright, rotated);
  }
  std::pair<int, std::string> most{0, ""};
  for (const std::string& z : order) {
    if (per_zone[z] > most.first) most = {per_zone[z], z};
  }
  return most;
}

std::string Fleet::NoPodNamed(std::string_view name) const {
  std::vector<std::string> names;
  for (const Pod& p : pods_) names.push_back(p.name());
  return "no pod '" + std::string(name).substr(0, 80) + "' in this fleet; pods: " +
         SomeNames(names);
}

Status Fleet::CheckScope(const AcceleratorType& type, std::string_view zone, std::string_view pod,
                         bool preemptible) const {
  const std::string what = type.ToString();
  const std::string job_class(PodClassName(preemptible ? PodClass::kPreemptible
                                                       : PodClass::kOnDemand));
  if (zone.empty() && pod.empty()) {
    if (HasClassPods() && PodsThatCanHold(type, "", "", preemptible).empty()) {
      return ToStatus(InvalidArgument("no pod of this fleet that takes " + job_class +
                                      " jobs can hold a " + what));
    }
    return Status::Ok();
  }
  if (!pod.empty()) {
    const std::optional<int> index = IndexOf(pod);
    if (!index) return ToStatus(InvalidArgument("pod: " + NoPodNamed(pod)));
    const std::string& in_zone = zones_[static_cast<size_t>(*index)];
    if (!zone.empty() && in_zone != zone) {
      return ToStatus(InvalidArgument("pod " + std::string(pod) + " is in zone '" + in_zone +
                                      "', not '" + std::string(zone).substr(0, 80) + "'"));
    }
    if (!CanHold(*index, type)) {
      const Pod& p = pods_[static_cast<size_t>(*index)];
      return ToStatus(InvalidArgument("pod " + p.name() + " (" +
                                      std::string(SpecOf(p.generation()).name) + " " +
                                      std::to_string(p.host_rows()) + "x" +
                                      std::to_string(p.host_cols()) + ") cannot hold a " + what));
    }
    if (!CanHold(*index, type, "", "", preemptible)) {
      return ToStatus(InvalidArgument(
          "pod " + std::string(pod) + " takes " +
          std::string(PodClassName(classes_[static_cast<size_t>(*index)])) + " jobs only"));
    }
    return Status::Ok();
  }
  if (std::find(zones_.begin(), zones_.end(), zone) == zones_.end()) {
    std::vector<std::string> zones;
    for (const std::string& z : zones_) {
      if (!z.empty() && std::find(zones.begin(), zones.end(), z) == zones.end()) zones.push_back(z);
    }
    return ToStatus(InvalidArgument("zone: no pod of this fleet is in zone '" +
                                    std::string(zone).substr(0, 80) + "'; zones: " +
                                    (zones.empty() ? "none configured" : SomeNames(zones))));
  }
  if (PodsThatCanHold(type, zone, "").empty()) {
    return ToStatus(InvalidArgument("no pod of zone " + std::string(zone) + " can hold a " + what));
  }
  if (PodsThatCanHold(type, zone, "", preemptible).empty()) {
    return ToStatus(InvalidArgument("no pod of zone " + std::string(zone) + " that takes " +
                                    job_class + " jobs can hold a " + what));
  }
  return Status::Ok();
}

Result<AcceleratorType> Fleet::ParseType(std::string_view text) const {
  if (size() == 1) return pods_.front().ParseType(text);
  Result<AcceleratorType> type = AcceleratorType::Parse(text);
  if (!type) return type;
  if (!PodsThatCanHold(*type).empty()) return type;
  // Where each type could run, one entry per kind of pod (generation and grid), in fleet order.
  std::map<std::tuple<Generation, int, int>, std::vector<std::string>> kinds;
  std::vector<const Pod*> examples;  // the first pod of each kind
  for (const Pod& p : pods_) {
    auto [it, added] = kinds.try_emplace(std::make_tuple(p.generation(), p.host_rows(), p.host_cols()));
    if (added) examples.push_back(&p);
    it->second.push_back(p.name());
  }
  std::string where;
  for (const Pod* kind : examples) {
    const Pod& example = *kind;
    const std::vector<std::string>& names =
        kinds.at(std::make_tuple(example.generation(), example.host_rows(), example.host_cols()));
    std::string types;
    for (const AcceleratorType& t :
         ValidTypes(example.generation(), example.host_rows(), example.host_cols())) {
      types += (types.empty() ? "" : ", ") + t.ToString();
    }
    where += (where.empty() ? "" : "; ") + types + " on " +
             (names.size() == 1 ? "pod " : std::to_string(names.size()) + " " + GridText(example) +
                                               " pods ") +
             SomeNames(names) + (names.size() == 1 ? " (" + GridText(example) + ")" : "");
  }
  return InvalidArgument("no pod of this fleet can hold a " + type->ToString() +
                         "; types it can run: " + where);
}

bool Fleet::CanPlace(const FleetPlacement& p) const {
  return p.pod >= 0 && p.pod < size() && pod(p.pod).CanPlace(p.rect);
}

Status Fleet::Allocate(AllocationId id, const FleetPlacement& p) {
  if (p.pod < 0 || p.pod >= size()) {
    return ToStatus(InvalidArgument("no pod " + std::to_string(p.pod) + " in a fleet of " +
                                    std::to_string(size())));
  }
  return pods_[static_cast<size_t>(p.pod)].Allocate(id, p.rect);
}

Status Fleet::Release(AllocationId id, int pod_index) {
  if (pod_index < 0 || pod_index >= size()) {
    return ToStatus(InvalidArgument("no pod " + std::to_string(pod_index) + " in a fleet of " +
                                    std::to_string(size())));
  }
  return pods_[static_cast<size_t>(pod_index)].Release(id);
}

Status Fleet::MarkUnhealthy(HostId host) {
  if (!Contains(host)) return UnknownHost(host, num_hosts_);
  const Located at = Locate(host);
  return pods_[static_cast<size_t>(at.pod)].MarkUnhealthy(at.in_pod);
}

Status Fleet::MarkHealthy(HostId host) {
  if (!Contains(host)) return UnknownHost(host, num_hosts_);
  const Located at = Locate(host);
  return pods_[static_cast<size_t>(at.pod)].MarkHealthy(at.in_pod);
}

Status Fleet::SetDraining(HostId host, bool draining) {
  if (!Contains(host)) return UnknownHost(host, num_hosts_);
  const Located at = Locate(host);
  return pods_[static_cast<size_t>(at.pod)].SetDraining(at.in_pod, draining);
}

int Fleet::AvailableHosts() const {
  int n = 0;
  for (const Pod& p : pods_) n += p.AvailableHosts();
  return n;
}

int Fleet::AllocatedHosts() const {
  int n = 0;
  for (const Pod& p : pods_) n += p.AllocatedHosts();
  return n;
}

}  // namespace podsched::pod
