#include "store/jobdb/codec.h"

#include <nlohmann/json.hpp>

#include "common/json_reader.h"

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
  // Absent in records written before placement scopes (issue 28) and when unscoped.
  if (!s.zone.empty()) j["zone"] = s.zone;
  // Absent in records written before multislice jobs (issue 28) and for one slice.
  if (s.slices != 1) j["slices"] = s.slices;
  if (!s.pod.empty()) j["pod"] = s.pod;
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

// A stored host list (EncodeHosts), already parsed.
Result<std::vector<HostId>> HostsFromJson(const json& j) {
  if (!j.is_array()) return DataLoss("stored host list is not an array");
  std::vector<HostId> hosts;
  for (const json& h : j) {
    auto id = JsonInteger<int32_t>(h);
    if (!id) return DataLoss("stored host list holds " + h.dump() + ", not a host id");
    hosts.emplace_back(*id);
  }
  return hosts;
}

// Stored bytes are read through JsonReader: a damaged or foreign record comes back as DataLoss
// naming the field, and numbers are checked against their C++ types (no silent truncation).
Result<core::JobSpec> SpecFromJson(const json& j) {
  JsonReader r(j, "stored job spec", StatusCode::kDataLoss);
  core::JobSpec s;
  s.name = r.String("name");
  s.user = UserName(r.String("user"));
  s.accelerator = r.String("accelerator");
  s.preemptible = r.Bool("preemptible");
  s.priority = r.Integer<int>("priority");
  s.command = r.String("command");
  s.args = r.Strings("args");
  s.env = r.StringMap("env");
  s.ranks_per_host = r.Integer<int>("ranks_per_host");
  s.checkpoint_interval = Duration(r.Integer<int64_t>("checkpoint_interval_us"));
  s.grace_period = Duration(r.Integer<int64_t>("grace_period_us"));
  s.max_runtime = Duration(r.Integer<int64_t>("max_runtime_us"));
  s.max_restarts = r.Integer<int>("max_restarts");
  if (r.Has("launcher")) {
    auto launcher = core::ParseLauncher(r.String("launcher"));
    if (launcher) {
      s.launcher = *launcher;
    } else if (r.ok()) {
      r.Fail("launcher", launcher.error().message());
    }
  }
  if (r.Has("zone")) s.zone = r.String("zone");
  if (r.Has("slices")) s.slices = r.Integer<int>("slices");
  if (r.Has("pod")) s.pod = r.String("pod");
  if (r.Has("expected_runtime_us")) {
    s.expected_runtime = Duration(r.Integer<int64_t>("expected_runtime_us"));
  }
  if (r.Has("array")) {
    JsonReader a = r.Object("array");
    s.array = core::ArrayTask{JobId(a.Integer<int64_t>("id")), a.Integer<int>("index"),
                              a.Integer<int>("throttle"), a.String("expression")};
  }
  if (r.Has("dependencies")) {
    for (JsonReader& d : r.Objects("dependencies")) {
      const int kind = d.Integer<int>("kind");
      if (kind < 0 || kind > static_cast<int>(core::DependencyKind::kAfterNotOk)) {
        d.Fail("kind", "is not a dependency kind");
      }
      core::Dependency dep{static_cast<core::DependencyKind>(d.ok() ? kind : 0),
                           JobId(d.Integer<int64_t>("job")), std::nullopt};
      if (d.Has("index")) dep.array_index = d.Integer<int>("index");
      s.dependencies.push_back(dep);
    }
  }
  if (!r.ok()) return std::unexpected(r.status());
  return s;
}

}  // namespace

std::string EncodeSpec(const core::JobSpec& spec) {
  std::vector<uint8_t> bytes = json::to_cbor(SpecToJson(spec));
  return std::string(bytes.begin(), bytes.end());
}

Result<core::JobSpec> DecodeSpec(std::string_view bytes) {
  json j;
  try {
    // allow_exceptions=false covers syntax errors only: a CBOR array or map header announcing
    // more elements than memory can hold still throws out_of_range (found by stored_spec_fuzz).
    j = json::from_cbor(bytes, /*strict=*/true, /*allow_exceptions=*/false);
  } catch (const json::exception& e) {
    return DataLoss(std::string("stored job spec is not valid CBOR: ") + e.what());
  }
  if (j.is_discarded()) return DataLoss("stored job spec is not valid CBOR");
  return SpecFromJson(j);
}

std::string EncodeSlices(const std::vector<StoredSlice>& slices) {
  json j = json::array();
  for (const StoredSlice& s : slices) {
    json one = {{"row", s.rect.origin.row},
                {"col", s.rect.origin.col},
                {"rows", s.rect.shape.rows},
                {"cols", s.rect.shape.cols}};
    if (s.pod) one["pod"] = *s.pod;
    j.push_back(std::move(one));
  }
  return j.dump();
}

Result<std::vector<StoredSlice>> DecodeSlices(std::string_view text) {
  auto j = ParseJsonDocument(text, "stored slices", StatusCode::kDataLoss);
  if (!j) return std::unexpected(j.error());
  if (!j->is_array()) return DataLoss("stored slices are not an array");
  std::vector<StoredSlice> slices;
  for (const json& one : *j) {
    if (!one.is_object()) return DataLoss("stored slices hold " + one.dump() + ", not an object");
    JsonReader r(one, "stored slice", StatusCode::kDataLoss);
    StoredSlice s;
    s.rect = pod::Placement{{r.Integer<int>("row"), r.Integer<int>("col")},
                            {r.Integer<int>("rows"), r.Integer<int>("cols")}};
    if (r.Has("pod")) s.pod = r.String("pod");
    if (!r.ok()) return std::unexpected(r.status());
    slices.push_back(std::move(s));
  }
  return slices;
}

std::string EncodeEventSlices(const std::vector<core::JobEvent::Slice>& slices) {
  json j = json::array();
  for (const core::JobEvent::Slice& s : slices) {
    json hosts = json::array();
    for (HostId h : s.hosts) hosts.push_back(h.value());
    j.push_back({{"pod", s.pod}, {"hosts", std::move(hosts)}});
  }
  return j.dump();
}

Result<std::vector<core::JobEvent::Slice>> DecodeEventSlices(std::string_view text) {
  auto j = ParseJsonDocument(text, "stored event slices", StatusCode::kDataLoss);
  if (!j) return std::unexpected(j.error());
  if (!j->is_array()) return DataLoss("stored event slices are not an array");
  std::vector<core::JobEvent::Slice> slices;
  for (const json& one : *j) {
    if (!one.is_object() || !one.contains("pod") || !one["pod"].is_string() ||
        !one.contains("hosts")) {
      return DataLoss("stored event slices hold " + one.dump().substr(0, 80) +
                      ", not {pod, hosts}");
    }
    auto hosts = HostsFromJson(one["hosts"]);
    if (!hosts) return std::unexpected(hosts.error());
    slices.push_back({one["pod"].get<std::string>(), std::move(*hosts)});
  }
  return slices;
}

std::string EncodeHosts(const std::vector<HostId>& hosts) {
  json j = json::array();
  for (HostId h : hosts) j.push_back(h.value());
  return j.dump();
}

Result<std::vector<HostId>> DecodeHosts(std::string_view text) {
  auto j = ParseJsonDocument(text, "stored host list", StatusCode::kDataLoss);
  if (!j) return std::unexpected(j.error());
  return HostsFromJson(*j);
}

}  // namespace podsched::jobdb
