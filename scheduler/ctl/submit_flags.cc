#include "scheduler/ctl/submit_flags.h"


#include "common/env_contract.h"
#include "common/strings.h"
#include "scheduler/core/job_grammar.h"

namespace podsched::ctl {
namespace {

constexpr std::string_view kTimeForms =
    "use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or a number with s, m, h or d (90s, 2h)";

std::optional<int64_t> Digits(std::string_view text) { return ParseNonNegative(text, 9); }

Status CheckEnvName(std::string_view name) {
  if (!IsReservedEnvName(name)) return Status::Ok();
  return ToStatus(InvalidArgument("env " + std::string(name) +
                                  ": podsched sets it for every rank (the job contract, "
                                  "docs/jobspec.md); rename the variable"));
}

}  // namespace

Result<int64_t> ParseTimeLimit(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("--time '" + std::string(text) + "': " + std::string(kTimeForms));
  };
  if (text.empty()) return bad();
  int64_t seconds = 0;
  const char unit = text.back();
  if (unit == 's' || unit == 'm' || unit == 'h' || unit == 'd') {
    auto n = Digits(text.substr(0, text.size() - 1));
    if (!n) return bad();
    const int64_t scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
    seconds = *n * scale;
  } else {
    int64_t days = 0;
    std::string_view clock = text;
    const size_t dash = text.find('-');
    if (dash != std::string_view::npos) {
      auto d = Digits(text.substr(0, dash));
      if (!d) return bad();
      days = *d;
      clock = text.substr(dash + 1);
    }
    std::vector<int64_t> parts;
    for (std::string_view p : SplitOn(clock, ':')) {
      auto n = Digits(p);
      if (!n) return bad();
      parts.push_back(*n);
    }
    if (parts.size() > 3) return bad();
    if (dash != std::string_view::npos) {
      // D-HH, D-HH:MM, D-HH:MM:SS: the first field after the dash is hours.
      const int64_t scales[] = {3600, 60, 1};
      for (size_t i = 0; i < parts.size(); ++i) seconds += parts[i] * scales[i];
      seconds += days * 86400;
    } else if (parts.size() == 1) {
      seconds = parts[0] * 60;  // MM
    } else if (parts.size() == 2) {
      seconds = parts[0] * 60 + parts[1];  // MM:SS
    } else {
      seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];  // HH:MM:SS
    }
  }
  if (seconds <= 0) return InvalidArgument("--time '" + std::string(text) + "' must be > 0");
  return seconds;
}

Result<std::pair<std::string, std::string>> ParseEnvFlag(std::string_view text) {
  const size_t eq = text.find('=');
  const std::string_view key = text.substr(0, eq);
  const bool valid = eq != std::string_view::npos && IsEnvName(key);
  if (!valid) {
    return InvalidArgument("--env '" + std::string(text) +
                           "': use NAME=VALUE with NAME of letters, digits and _ (not first a "
                           "digit)");
  }
  if (Status reserved = CheckEnvName(key); !reserved.ok()) return std::unexpected(reserved);
  return std::make_pair(std::string(key), std::string(text.substr(eq + 1)));
}

Status ApplySubmitFlags(const SubmitOptions& o, api::JobSpec* spec) {
  if (!o.accelerator.empty()) spec->set_accelerator(o.accelerator);
  if (!o.zone.empty()) spec->set_zone(o.zone);
  if (!o.pod.empty()) spec->set_pod(o.pod);
  if (o.preemptible) spec->set_preemptible(true);
  if (o.priority != 0) spec->set_priority(o.priority);
  if (!o.name.empty()) spec->set_name(o.name);
  if (o.checkpoint_every != 0) spec->set_checkpoint_every_seconds(o.checkpoint_every);
  for (const std::string& kv : o.env) {
    auto parsed = ParseEnvFlag(kv);
    if (!parsed) return parsed.error();
    (*spec->mutable_env())[parsed->first] = parsed->second;
  }
  if (o.ranks_per_host != 0) spec->set_ranks_per_host(o.ranks_per_host);
  if (o.slices != 0) spec->set_slices(o.slices);
  if (!o.time.empty()) {
    auto seconds = ParseTimeLimit(o.time);
    if (!seconds) return seconds.error();
    spec->set_max_runtime_seconds(*seconds);
  }
  if (!o.launcher.empty()) spec->set_launcher(o.launcher);
  if (!o.array.empty()) spec->set_array(o.array);
  if (!o.dependency.empty()) spec->set_dependency(o.dependency);
  for (const auto& [name, value] : spec->env()) {  // a -f file's env too
    if (Status reserved = CheckEnvName(name); !reserved.ok()) return reserved;
  }
  if (!spec->array().empty()) {
    auto array = core::ParseArraySpec(spec->array());
    if (!array) return array.error();
  }
  if (!spec->dependency().empty()) {
    auto deps = core::ParseDependencies(spec->dependency());
    if (!deps) return deps.error();
  }
  if (!o.command.empty()) {
    spec->set_command(o.command.front());
    spec->clear_args();
    for (size_t i = 1; i < o.command.size(); ++i) spec->add_args(o.command[i]);
  }
  if (spec->accelerator().empty() || spec->command().empty()) {
    return ToStatus(
        InvalidArgument("submit needs -f job.yaml or --accelerator TYPE -- COMMAND [ARGS...]"));
  }
  if (spec->name().empty()) {
    std::string base = spec->command().substr(spec->command().find_last_of('/') + 1);
    spec->set_name(base.empty() ? "job" : base);
  }
  return Status::Ok();
}

}  // namespace podsched::ctl
