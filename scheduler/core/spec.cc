#include "scheduler/core/spec.h"

#include <span>
#include <string>

#include "common/env_contract.h"
#include "scheduler/core/dependency.h"

namespace podsched::core {
namespace {

Status Bad(std::string message) { return Status(StatusCode::kInvalidArgument, message); }

Status CheckRange(std::string_view field, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return Status::Ok();
  return Bad(std::string(field) + " is " + std::to_string(value) + "; must be " +
             std::to_string(lo) + ".." + std::to_string(hi));
}

Status CheckDuration(std::string_view field, Duration d, Duration max) {
  if (d >= Duration::zero() && d <= max) return Status::Ok();
  return Bad(std::string(field) + " is " + std::to_string(ToSeconds(d)) + " s; must be 0.." +
             std::to_string(static_cast<int64_t>(ToSeconds(max))) + " s");
}

Status CheckFields(const JobSpec& spec) {
  using std::chrono::hours;
  if (spec.user.value().empty()) return Bad("user is empty");
  if (spec.user.value().size() > kMaxUserLength) {
    return Bad("user is longer than " + std::to_string(kMaxUserLength) + " bytes");
  }
  if (spec.name.size() > kMaxNameLength) {
    return Bad("name is longer than " + std::to_string(kMaxNameLength) + " bytes");
  }
  if (spec.command.empty()) return Bad("command is empty; give the program to run");
  for (const auto& [key, value] : {std::pair{"zone", &spec.zone}, std::pair{"pod", &spec.pod}}) {
    if (!value->empty() && !pod::IsPodName(*value)) {
      return Bad(std::string(key) + " must be 1-64 characters of A-Z a-z 0-9 . _ -");
    }
  }
  if (spec.command.size() > kMaxCommandLength) {
    return Bad("command is longer than " + std::to_string(kMaxCommandLength) + " bytes");
  }
  if (spec.args.size() > kMaxArgs) {
    return Bad("more than " + std::to_string(kMaxArgs) + " args");
  }
  if (spec.env.size() > kMaxEnv) return Bad("more than " + std::to_string(kMaxEnv) + " env vars");
  if (spec.dependencies.size() > kMaxDependencies) {
    return Bad("more than " + std::to_string(kMaxDependencies) + " dependencies");
  }
  for (const Status& s : {CheckRange("priority", spec.priority, 0, kMaxPriority),
                          CheckRange("ranks_per_host", spec.ranks_per_host, 1, kMaxRanksPerHost),
                          CheckRange("max_restarts", spec.max_restarts, 0, kMaxRestarts),
                          CheckRange("slices", spec.slices, 1, kMaxSlices),
                          CheckDuration("checkpoint_interval", spec.checkpoint_interval, hours(24)),
                          CheckDuration("grace_period", spec.grace_period, hours(1)),
                          CheckDuration("max_runtime", spec.max_runtime, hours(24 * 365))}) {
    if (!s.ok()) return s;
  }
  if (spec.expected_runtime) {
    if (*spec.expected_runtime <= Duration::zero()) return Bad("expected_runtime must be > 0");
    Status s = CheckDuration("expected_runtime", *spec.expected_runtime, hours(24 * 365));
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

std::string Join(std::span<const std::string_view> names, std::string_view suffix = "") {
  std::string out;
  for (std::string_view n : names)
    out += (out.empty() ? "" : ", ") + std::string(n) + std::string(suffix);
  return out;
}

// What the agents could not pass to execve: a NUL ends a C string, so the agent drops such a
// Launch, and the job would hold its hosts PLACED for ever (the audit's M9). Checked at
// submission only: a job stored before the rule still loads.
Status CheckSubmittedBytes(const JobSpec& spec) {
  if (spec.command.find('\0') != std::string::npos) return Bad("command contains a NUL byte");
  for (size_t i = 0; i < spec.args.size(); ++i) {
    if (spec.args[i].find('\0') != std::string::npos) {
      return Bad("args[" + std::to_string(i) + "] contains a NUL byte");
    }
  }
  return Status::Ok();
}

Status CheckEnvNames(const JobSpec& spec) {
  for (const auto& [name, value] : spec.env) {
    // A name the agent could not export (mpirun -x, execve) would fail every launch instead.
    if (!IsEnvName(name)) {
      return Bad("env name '" + name +
                 "' is not a variable name (letters, digits and _, not first a digit)");
    }
    if (value.find('\0') != std::string::npos) return Bad("env " + name + " contains a NUL byte");
    if (!IsReservedEnvName(name)) continue;
    return Bad("env " + name + " is set by podsched for every rank (the job contract: " +
               Join(kContractEnvNames) + " and every " + Join(kContractEnvPrefixes, "*") +
               " name except " + Join(kSpecSettableContractNames) + "); rename the variable");
  }
  return Status::Ok();
}

}  // namespace

Result<pod::AcceleratorType> ValidateSpec(const JobSpec& spec, const pod::Fleet& fleet,
                                          SpecOrigin origin) {
  Status fields = CheckFields(spec);
  if (fields.ok() && origin == SpecOrigin::kSubmission) fields = CheckSubmittedBytes(spec);
  if (fields.ok() && origin == SpecOrigin::kSubmission) fields = CheckEnvNames(spec);
  if (!fields.ok()) return std::unexpected(fields);
  auto type = fleet.ParseType(spec.accelerator);
  if (!type || origin != SpecOrigin::kSubmission) return type;
  if (Status s = fleet.CheckScope(*type, spec.zone, spec.pod, spec.preemptible); !s.ok()) {
    return std::unexpected(s);
  }
  if (spec.slices > 1) {
    // All slices in one zone (one pod, or pods on the data-centre network between them): a job
    // that no zone could ever hold would wait for ever.
    const auto [most, zone] = fleet.MostSlicesInOneZone(
        *type, spec.zone, spec.pod,
        fleet.HasClassPods() ? std::optional<bool>(spec.preemptible) : std::nullopt);
    if (most < spec.slices) {
      return InvalidArgument(
          "slices is " + std::to_string(spec.slices) + ", but " +
          (most == 0 ? std::string("no zone")
                     : "at most " + std::to_string(most) + " " + type->ToString() +
                           " slices fit in one zone (" + (zone.empty() ? "the site" : zone) +
                           ")") +
          " of this fleet" + (spec.pod.empty() && spec.zone.empty() ? "" : " within the job's scope") +
          ": ask for fewer slices or a smaller type");
    }
  }
  return type;
}

int64_t SpecBytes(const JobSpec& spec) {
  int64_t n = static_cast<int64_t>(spec.name.size() + spec.command.size() + spec.accelerator.size());
  for (const auto& a : spec.args) n += static_cast<int64_t>(a.size());
  for (const auto& [k, v] : spec.env) n += static_cast<int64_t>(k.size() + v.size());
  return n;
}

}  // namespace podsched::core
