#include "pod/fleet_yaml.h"

#include <yaml-cpp/yaml.h>

#include <string>

#include "common/yaml_reader.h"

namespace podsched::pod {
namespace {

Status AddEntry(const YAML::Node& n, size_t index, UnnamedPods unnamed,
                std::vector<FleetPodSpec>& out) {
  const std::string section = "pods[" + std::to_string(index) + "]";
  if (Status s = YamlCheckKeys(n, section, {"name", "generation", "host_rows", "host_cols", "zone",
                                            "count", "class"});
      !s.ok()) {
    return s;
  }
  FleetPodSpec pod;
  std::string generation = "v2";
  std::string job_class = "any";
  int count = 1;
  for (Status s : {YamlRead(n, "name", section, pod.name),
                   YamlRead(n, "generation", section, generation),
                   YamlRead(n, "zone", section, pod.zone), YamlRead(n, "count", section, count),
                   YamlRead(n, "class", section, job_class)}) {
    if (!s.ok()) return s;
  }
  auto parsed_class = ParsePodClass(job_class);
  if (!parsed_class) return parsed_class.error().WithContext(section + ".class");
  pod.job_class = *parsed_class;
  if (!n["name"]) {
    if (unnamed == UnnamedPods::kRefused) {
      return ToStatus(InvalidArgument(section + ".name is required"));
    }
    pod.name = "pod" + std::to_string(index);
  }
  auto gen = ParseGeneration(generation);
  if (!gen) return gen.error().WithContext(section + ".generation");
  pod.generation = *gen;
  pod.host_rows = SpecOf(pod.generation).full_pod_host_rows;
  pod.host_cols = SpecOf(pod.generation).full_pod_host_cols;
  for (Status s : {YamlRead(n, "host_rows", section, pod.host_rows),
                   YamlRead(n, "host_cols", section, pod.host_cols)}) {
    if (!s.ok()) return s;
  }
  // The grid by the pod's own rule, naming the entry, before anything multiplies it.
  if (auto grid = Pod::Create(pod.name, pod.generation, pod.host_rows, pod.host_cols); !grid) {
    return grid.error().WithContext(section + ", pod " + pod.name);
  }
  if (count < 1 || count > kMaxFleetPods) {
    return ToStatus(InvalidArgument(section + ".count must be 1.." + std::to_string(kMaxFleetPods) +
                                    ", not " + std::to_string(count)));
  }
  if (out.size() + static_cast<size_t>(count) > static_cast<size_t>(kMaxFleetPods)) {
    return ToStatus(InvalidArgument(section + ": a fleet has at most " +
                                    std::to_string(kMaxFleetPods) + " pods"));
  }
  if (count == 1) {
    out.push_back(std::move(pod));
    return Status::Ok();
  }
  // NAME-000 .. NAME-099: zero-padded to the width of the last index, so names sort in order.
  const size_t width = std::to_string(count - 1).size();
  for (int i = 0; i < count; ++i) {
    std::string number = std::to_string(i);
    FleetPodSpec copy = pod;
    copy.name = pod.name + "-" + std::string(width - number.size(), '0') + number;
    out.push_back(std::move(copy));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<FleetPodSpec>> ParseFleetYaml(std::string_view text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidArgument("the fleet is not valid YAML: " + std::string(e.what()));
  }
  if (Status s = YamlCheckKeys(root, "fleet", {"pods"}); !s.ok()) return std::unexpected(s);
  const YAML::Node pods = root["pods"];
  if (!pods) return InvalidArgument("fleet: pods must be a non-empty list");
  return ParseFleetPods(pods, UnnamedPods::kRefused);
}

Result<std::vector<FleetPodSpec>> ParseFleetPods(const YAML::Node& pods, UnnamedPods unnamed) {
  if (!pods.IsSequence() || pods.size() == 0) {
    return InvalidArgument("pods must be a non-empty list");
  }
  std::vector<FleetPodSpec> out;
  for (size_t i = 0; i < pods.size(); ++i) {
    if (Status s = AddEntry(pods[i], i, unnamed, out); !s.ok()) return std::unexpected(s);
  }
  // Fleet::Create's own checks (names, grids), so that a document accepted here builds.
  if (auto fleet = Fleet::Create(out); !fleet) return std::unexpected(fleet.error());
  return out;
}

}  // namespace podsched::pod
