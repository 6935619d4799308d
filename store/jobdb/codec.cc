#include "store/jobdb/codec.h"

#include <nlohmann/json.hpp>

namespace podsched::jobdb {
namespace {

using nlohmann::json;

// Field names are part of the stored format: renaming one needs a migration.
json SpecToJson(const core::JobSpec& s) {
  json j = {
      {"name", s.name},
      {"user", s.user.value()},
      {"accelerator", s.accelerator},
      {"preemptible", s.preemptible},
      {"priority", s.priority},
      {"command", s.command},
      {"args", s.args},
      {"env", s.env},
      {"ranks_per_host", s.ranks_per_host},
      {"checkpoint_interval_us", s.checkpoint_interval.count()},
      {"grace_period_us", s.grace_period.count()},
      {"max_runtime_us", s.max_runtime.count()},
      {"max_restarts", s.max_restarts},
  };
  if (s.launcher != core::Launcher::kMpi) j["launcher"] = core::LauncherName(s.launcher);
  if (s.expected_runtime) j["expected_runtime_us"] = s.expected_runtime->count();
  // Absent in records written before arrays and dependencies existed (no migration needed).
  if (s.array) {
    j["array"] = {{"id", s.array->array_id.value()},
                  {"index", s.array->index},
                  {"throttle", s.array->throttle},
                  {"expression", s.array->expression}};
  }
  if (!s.dependencies.empty()) {
    json deps = json::array();
    for (const core::Dependency& d : s.dependencies) {
      json dep = {{"kind", static_cast<int>(d.kind)}, {"job", d.job.value()}};
      if (d.array_index) dep["index"] = *d.array_index;
      deps.push_back(std::move(dep));
    }
    j["dependencies"] = std::move(deps);
  }
  return j;
}

core::JobSpec SpecFromJson(const json& j) {
  core::JobSpec s;
  s.name = j.at("name").get<std::string>();
  s.user = UserName(j.at("user").get<std::string>());
  s.accelerator = j.at("accelerator").get<std::string>();
  s.preemptible = j.at("preemptible").get<bool>();
  s.priority = j.at("priority").get<int>();
  s.command = j.at("command").get<std::string>();
  s.args = j.at("args").get<std::vector<std::string>>();
  s.env = j.at("env").get<std::map<std::string, std::string>>();
  s.ranks_per_host = j.at("ranks_per_host").get<int>();
  s.checkpoint_interval = Duration(j.at("checkpoint_interval_us").get<int64_t>());
  s.grace_period = Duration(j.at("grace_period_us").get<int64_t>());
  s.max_runtime = Duration(j.at("max_runtime_us").get<int64_t>());
  s.max_restarts = j.at("max_restarts").get<int>();
  if (auto it = j.find("launcher"); it != j.end()) {
    auto launcher = core::ParseLauncher(it->get<std::string>());
    if (!launcher) throw std::invalid_argument(launcher.error().message());
    s.launcher = *launcher;
  }
  if (auto it = j.find("expected_runtime_us"); it != j.end()) {
    s.expected_runtime = Duration(it->get<int64_t>());
  }
  if (auto it = j.find("array"); it != j.end()) {
    s.array = core::ArrayTask{JobId(it->at("id").get<int64_t>()), it->at("index").get<int>(),
                              it->at("throttle").get<int>(),
                              it->at("expression").get<std::string>()};
  }
  if (auto it = j.find("dependencies"); it != j.end()) {
    for (const json& d : *it) {
      const int kind = d.at("kind").get<int>();
      if (kind < 0 || kind > static_cast<int>(core::DependencyKind::kAfterNotOk)) {
        throw json::out_of_range::create(401, "unknown dependency kind", &d);
      }
      core::Dependency dep{static_cast<core::DependencyKind>(kind), JobId(d.at("job").get<int64_t>()),
                           std::nullopt};
      if (auto index = d.find("index"); index != d.end()) dep.array_index = index->get<int>();
      s.dependencies.push_back(dep);
    }
  }
  return s;
}

}  // namespace

std::string EncodeSpec(const core::JobSpec& spec) {
  std::vector<uint8_t> bytes = json::to_cbor(SpecToJson(spec));
  return std::string(bytes.begin(), bytes.end());
}

Result<core::JobSpec> DecodeSpec(std::string_view bytes) {
  // nlohmann-json reports malformed input by exceptions; they stop here.
  try {
    return SpecFromJson(json::from_cbor(bytes));
  } catch (const std::exception& e) {  // json::exception, or an unknown launcher name
    return DataLoss(std::string("stored job spec is unreadable: ") + e.what());
  }
}

std::string EncodeHosts(const std::vector<HostId>& hosts) {
  json j = json::array();
  for (HostId h : hosts) j.push_back(h.value());
  return j.dump();
}

Result<std::vector<HostId>> DecodeHosts(std::string_view text) {
  try {
    std::vector<HostId> hosts;
    for (const json& h : json::parse(text)) hosts.emplace_back(h.get<int32_t>());
    return hosts;
  } catch (const json::exception& e) {
    return DataLoss(std::string("stored host list is unreadable: ") + e.what());
  }
}

}  // namespace podsched::jobdb
