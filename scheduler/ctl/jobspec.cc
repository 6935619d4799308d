#include "scheduler/ctl/jobspec.h"

#include <yaml-cpp/yaml.h>

#include "common/yaml_reader.h"

#include <set>

namespace podsched::ctl {
namespace {

template <typename T>
Result<T> As(const YAML::Node& n, const std::string& key, std::string_view expected) {
  return YamlAs<T>(n, "job spec: '" + key + "'", expected);
}

}  // namespace

Result<api::JobSpec> ParseJobSpecYaml(std::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("job spec is not valid YAML: ") + e.what());
  }
  if (!root.IsMap()) return InvalidArgument("job spec must be a YAML mapping (key: value lines)");
  static const std::set<std::string> kKeys = {"name",
                                              "accelerator",
                                              "zone",
                                              "pod",
                                              "preemptible",
                                              "priority",
                                              "command",
                                              "args",
                                              "env",
                                              "ranks_per_host",
                                              "slices",
                                              "checkpoint_every_seconds",
                                              "grace_period_seconds",
                                              "max_runtime_seconds",
                                              "max_restarts",
                                              "expected_runtime_seconds",
                                              "checkpoint_url",
                                              "launcher",
                                              "array",
                                              "dependency"};
  api::JobSpec spec;
  for (const auto& kv : root) {
    // A key may be any YAML node ("? [a, b]: x"); only a scalar converts to a string.
    auto name = YamlKey(kv.first, "job spec");
    if (!name) return std::unexpected(name.error());
    const std::string& key = *name;
    const YAML::Node& v = kv.second;
    if (!kKeys.contains(key)) {
      std::string valid;
      for (const auto& k : kKeys) valid += (valid.empty() ? "" : ", ") + k;
      return InvalidArgument("job spec: unknown key '" + key + "'; valid: " + valid);
    }
    auto str = [&](auto setter) -> Status {
      auto s = As<std::string>(v, key, "a string");
      if (!s) return s.error();
      setter(*s);
      return Status::Ok();
    };
    auto num = [&](auto setter) -> Status {
      auto n = As<int64_t>(v, key, "an integer");
      if (!n) return n.error();
      setter(*n);
      return Status::Ok();
    };
    // The API's int32 fields: a larger number is an error, not silently truncated.
    auto num32 = [&](auto setter) -> Status {
      auto n = As<int32_t>(v, key, "an integer between -2147483648 and 2147483647");
      if (!n) return n.error();
      setter(*n);
      return Status::Ok();
    };
    Status s;
    if (key == "name") {
      s = str([&](const std::string& x) { spec.set_name(x); });
    } else if (key == "accelerator") {
      s = str([&](const std::string& x) { spec.set_accelerator(x); });
    } else if (key == "zone") {
      s = str([&](const std::string& x) { spec.set_zone(x); });
    } else if (key == "pod") {
      s = str([&](const std::string& x) { spec.set_pod(x); });
    } else if (key == "checkpoint_url") {
      s = str([&](const std::string& x) { spec.set_checkpoint_url(x); });
    } else if (key == "launcher") {
      s = str([&](const std::string& x) { spec.set_launcher(x); });
    } else if (key == "array") {
      s = str([&](const std::string& x) { spec.set_array(x); });
    } else if (key == "dependency") {
      s = str([&](const std::string& x) { spec.set_dependency(x); });
    } else if (key == "preemptible") {
      auto b = As<bool>(v, key, "true or false");
      if (!b) return std::unexpected(b.error());
      spec.set_preemptible(*b);
    } else if (key == "priority") {
      s = num32([&](int32_t x) { spec.set_priority(x); });
    } else if (key == "ranks_per_host") {
      s = num32([&](int32_t x) { spec.set_ranks_per_host(x); });
    } else if (key == "slices") {
      s = num32([&](int32_t x) { spec.set_slices(x); });
    } else if (key == "max_restarts") {
      s = num32([&](int32_t x) { spec.set_max_restarts(x); });
    } else if (key == "checkpoint_every_seconds") {
      s = num([&](int64_t x) { spec.set_checkpoint_every_seconds(x); });
    } else if (key == "grace_period_seconds") {
      s = num([&](int64_t x) { spec.set_grace_period_seconds(x); });
    } else if (key == "max_runtime_seconds") {
      s = num([&](int64_t x) { spec.set_max_runtime_seconds(x); });
    } else if (key == "expected_runtime_seconds") {
      s = num([&](int64_t x) { spec.set_expected_runtime_seconds(x); });
    } else if (key == "command") {
      if (v.IsSequence()) {
        auto list = As<std::vector<std::string>>(v, key, "a string or a list of strings");
        if (!list) return std::unexpected(list.error());
        if (list->empty()) return InvalidArgument("job spec: 'command' is an empty list");
        spec.set_command(list->front());
        for (size_t i = 1; i < list->size(); ++i) spec.add_args((*list)[i]);
      } else {
        s = str([&](const std::string& x) { spec.set_command(x); });
      }
    } else if (key == "args") {
      auto list = As<std::vector<std::string>>(v, key, "a list of strings");
      if (!list) return std::unexpected(list.error());
      for (const auto& a : *list) spec.add_args(a);
    } else if (key == "env") {
      auto env = As<std::map<std::string, std::string>>(v, key, "a mapping of strings");
      if (!env) return std::unexpected(env.error());
      for (const auto& [k, x] : *env) (*spec.mutable_env())[k] = x;
    }
    if (!s.ok()) return std::unexpected(s);
  }
  if (spec.accelerator().empty()) return InvalidArgument("job spec: 'accelerator' is required");
  if (spec.command().empty()) return InvalidArgument("job spec: 'command' is required");
  return spec;
}

}  // namespace podsched::ctl
