// A fleet described in YAML (issue 28): what `podsim replay --fleet FILE` reads, and the shape of
// the fleet section podsched's own configuration is to take.
//
//   pods:
//     - name: v2-pod            # required; unique
//       generation: v2          # v2 (default) or v3
//       host_rows: 8            # default: the generation's full pod
//       host_cols: 8
//       zone: us-central1-b     # optional
//     - name: dev               # `count` standalone copies: dev-000 .. dev-099
//       host_rows: 1
//       host_cols: 1
//       count: 100
//       class: preemptible      # any (default), on-demand or preemptible: the jobs it takes
//
// Errors name the entry and the key ("pods[2].count must be 1..4096"), and Fleet::Create's
// checks apply (unique names, possible grids). Bounded: at most kMaxFleetPods pods in all.
//
// Pure (parses text; the caller reads the file); thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "common/status.h"
#include "pod/fleet.h"

namespace YAML {
class Node;
}

namespace podsched::pod {

inline constexpr int kMaxFleetPods = 4096;

// The pods of a fleet document, in order (a `count` entry expanded in place).
Result<std::vector<FleetPodSpec>> ParseFleetYaml(std::string_view text);

// How a list of pod entries treats an entry without a name.
enum class UnnamedPods {
  kRefused,    // a fleet file: every entry names its pod
  kNumbered,   // podsched's configuration: entry i is "pod<i>" (one unnamed pod is "pod0")
};

// The pods of a YAML sequence of entries (the `pods` key of a fleet file or of podsched's
// configuration), with the same checks as ParseFleetYaml. Errors name "pods[i]" and the key.
Result<std::vector<FleetPodSpec>> ParseFleetPods(const YAML::Node& pods, UnnamedPods unnamed);

}  // namespace podsched::pod
