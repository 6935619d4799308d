// Fleet: the pods one podsched serves (issue 28) — full pods, partial grids and standalone
// devices (a v2-8 device is a 1x1 pod), each with a name and a zone.
//
// Host numbering: fleet-wide. The hosts of pod i are numbered from first_host(i), in the pod's
// own row-major order, so a HostId of the fleet is first_host(i) + the pod's own HostId. The pods'
// ranges follow each other in fleet order; a fleet of one pod numbers its hosts as the pod does.
// (A pod::Pod and everything in pod/ speaks of its own HostIds; the scheduling core speaks of
// the fleet's.)
//
// Promises
//   - Pod names are unique and non-empty; every pod has at least one host (Create checks).
//   - Allocate/Release change exactly the pod the placement names.
//   - ParseType accepts a type some pod of the fleet can hold; its error says where each type
//     could run.
//
// Pure: no I/O, no clock. Copyable (a scheduling pass copies the pods as its views).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "pod/pod.h"

namespace podsched::pod {

// A rectangle in one pod of the fleet.
struct FleetPlacement {
  int pod = 0;     // index in the fleet
  Placement rect;  // in that pod's own coordinates
  friend bool operator==(const FleetPlacement&, const FleetPlacement&) = default;
};

// Which jobs a pod takes: any, or only one class (the research grant's 5 on-demand and 100
// preemptible devices).
enum class PodClass { kAny, kOnDemand, kPreemptible };
std::string_view PodClassName(PodClass c);          // "any", "on-demand", "preemptible"
Result<PodClass> ParsePodClass(std::string_view text);  // errors list the three

// One pod of a fleet as configured.
struct FleetPodSpec {
  std::string name;
  Generation generation = Generation::kV2;
  int host_rows = 0;
  int host_cols = 0;
  std::string zone;  // e.g. "us-central1-b"; may be empty (one site)
  PodClass job_class = PodClass::kAny;
};

// 1-64 characters of A-Z a-z 0-9 . _ - (pod and zone names: they go into URLs, POD_SLICE and the
// agents' key file).
bool IsPodName(std::string_view name);

// Names for a message, at most three: "a", "a, b, c", "a, b, c and 97 more".
std::string SomeNames(const std::vector<std::string>& names);

class Fleet {
 public:
  // Errors name the pod: an empty or repeated name, an impossible grid; an empty fleet.
  static Result<Fleet> Create(const std::vector<FleetPodSpec>& pods);
  // A fleet of one pod (the embedded default, tests, the simulator's single pod).
  static Fleet Of(Pod pod, std::string zone = "");

  int size() const { return static_cast<int>(pods_.size()); }
  const Pod& pod(int index) const { return pods_.at(static_cast<size_t>(index)); }
  const std::vector<Pod>& pods() const { return pods_; }
  const std::string& zone(int index) const { return zones_.at(static_cast<size_t>(index)); }
  PodClass job_class(int index) const { return classes_.at(static_cast<size_t>(index)); }
  // Whether some pod takes one class only (then a job's class is part of where it may run).
  bool HasClassPods() const { return class_pods_ > 0; }
  // The index of the pod named `name`, or nullopt.
  std::optional<int> IndexOf(std::string_view name) const;
  // "no pod 'NAME' in this fleet; pods: a, b, c and 5 more", for an IndexOf that found nothing.
  std::string NoPodNamed(std::string_view name) const;
  int num_hosts() const { return num_hosts_; }

  // Host numbering (see above).
  int first_host(int index) const { return first_host_.at(static_cast<size_t>(index)); }
  HostId FleetHost(int pod_index, HostId in_pod) const {
    return HostId(first_host(pod_index) + in_pod.value());
  }
  bool Contains(HostId host) const { return host.value() >= 0 && host.value() < num_hosts_; }
  struct Located {
    int pod;
    HostId in_pod;
  };
  Located Locate(HostId host) const;            // CHECKs Contains(host)
  const HostStatus& host(HostId host) const;    // CHECKs Contains(host)
  std::vector<HostId> HostsIn(const FleetPlacement& p) const;  // fleet ids, row-major
  // How messages name a host: "host 7" in a fleet of one pod, "host 3 of pod dev7" otherwise.
  std::string HostName(HostId host) const;

  // A type some pod can hold (a fleet of one pod: exactly Pod::ParseType, and its errors).
  Result<AcceleratorType> ParseType(std::string_view text) const;
  // Whether pod `index` can ever hold `type` (its generation, a grid large enough), and is in
  // `zone` and named `pod` when they are given (a job's placement scope), and takes jobs of the
  // class `preemptible` when that is given (PodClass).
  bool CanHold(int index, const AcceleratorType& type, std::string_view zone = "",
               std::string_view pod = "", std::optional<bool> preemptible = std::nullopt) const;
  // Every pod that can hold `type`, in fleet order; only those of `zone` and named `pod` when
  // they are given (a job's placement scope), and of the job's class when it is given.
  std::vector<int> PodsThatCanHold(const AcceleratorType& type, std::string_view zone = "",
                                   std::string_view pod = "",
                                   std::optional<bool> preemptible = std::nullopt) const;
  // Multislice: the most slices of `type` that the pods of one zone (within the scope) hold when
  // empty, each pod tiled in the better orientation, and that zone (the first with the most).
  // Pods without a zone are one site together.
  std::pair<int, std::string> MostSlicesInOneZone(
      const AcceleratorType& type, std::string_view zone = "", std::string_view pod = "",
      std::optional<bool> preemptible = std::nullopt) const;
  // Whether a job of `type` and class `preemptible` scoped to `zone` and/or `pod` (empty: any)
  // has a pod to run on; else an error naming what is wrong: an unknown pod (listing some), a pod
  // in another zone, a pod that cannot hold the type or takes the other class only, an unknown
  // zone (listing the zones), a zone (or a fleet) none of whose pods of the job's class can hold
  // it.
  Status CheckScope(const AcceleratorType& type, std::string_view zone, std::string_view pod,
                    bool preemptible = false) const;

  bool CanPlace(const FleetPlacement& p) const;
  Status Allocate(AllocationId id, const FleetPlacement& p);
  Status Release(AllocationId id, int pod_index);
  Status MarkUnhealthy(HostId host);
  Status MarkHealthy(HostId host);
  Status SetDraining(HostId host, bool draining);

  int AvailableHosts() const;
  int AllocatedHosts() const;

 private:
  Fleet() = default;
  void Add(Pod pod, std::string zone, PodClass job_class = PodClass::kAny);
  std::vector<Pod> pods_;
  std::vector<std::string> zones_;
  std::vector<PodClass> classes_;
  int class_pods_ = 0;  // pods that take one class only
  std::vector<int> first_host_;
  int num_hosts_ = 0;
};

}  // namespace podsched::pod
