#include "scheduler/core/job_grammar.h"

#include <algorithm>

#include "common/strings.h"

namespace podsched::core {
namespace {

constexpr std::string_view kArrayForms =
    "use indices and ranges like 0-99, 1,3,5-9 or 0-15:4, optionally with %N (at most N tasks "
    "at once)";
constexpr std::string_view kDependencyForms =
    "use afterok:ID[:ID...], afterany:... or afternotok:..., joined by ',' (all must hold); an "
    "ID is a job id, an array id or ARRAY_INDEX";

std::optional<int64_t> Number(std::string_view text) { return ParseNonNegative(text, 12); }

Status BadArray(std::string_view text, const std::string& what) {
  return Status(StatusCode::kInvalidArgument,
                "array '" + std::string(text) + "': " + what + "; " + std::string(kArrayForms));
}

}  // namespace

Result<ArraySpec> ParseArraySpec(std::string_view text) {
  ArraySpec out;
  out.text = std::string(text);
  std::string_view ranges = text;
  if (size_t pct = text.find('%'); pct != std::string_view::npos) {
    ranges = text.substr(0, pct);
    auto n = Number(text.substr(pct + 1));
    if (!n || *n < 1 || *n > kMaxArrayTasks) {
      return std::unexpected(
          BadArray(text, "the throttle after % must be 1.." + std::to_string(kMaxArrayTasks)));
    }
    out.throttle = static_cast<int>(*n);
  }
  if (ranges.empty()) return std::unexpected(BadArray(text, "no indices"));
  std::vector<int> indices;
  for (std::string_view part : SplitOn(ranges, ',')) {
    std::string_view range = part;
    int64_t step = 1;
    if (size_t colon = part.find(':'); colon != std::string_view::npos) {
      range = part.substr(0, colon);
      auto s = Number(part.substr(colon + 1));
      if (!s || *s < 1) {
        return std::unexpected(BadArray(text, "'" + std::string(part) + "' needs a step >= 1"));
      }
      step = *s;
    }
    const size_t dash = range.find('-');
    auto lo = Number(range.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : Number(range.substr(dash + 1));
    if (!lo || !hi) {
      return std::unexpected(
          BadArray(text, "'" + std::string(part) + "' is not an index or a range"));
    }
    if (*hi > kMaxArrayIndex) {
      return std::unexpected(BadArray(
          text, "index " + std::to_string(*hi) + " is over " + std::to_string(kMaxArrayIndex)));
    }
    if (*lo > *hi) {
      return std::unexpected(BadArray(text, "range '" + std::string(part) + "' runs backwards"));
    }
    for (int64_t i = *lo; i <= *hi; i += step) {
      // Bounded before it is materialized: "0-1000000" must fail fast, not allocate.
      if (indices.size() >= static_cast<size_t>(kMaxArrayTasks)) {
        return std::unexpected(
            BadArray(text, "more than " + std::to_string(kMaxArrayTasks) + " tasks"));
      }
      indices.push_back(static_cast<int>(i));
    }
  }
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  out.indices = std::move(indices);
  return out;
}

Result<std::vector<Dependency>> ParseDependencies(std::string_view text) {
  auto bad = [&](const std::string& what) {
    return InvalidArgument("dependency '" + std::string(text) + "': " + what + "; " +
                           std::string(kDependencyForms));
  };
  if (text.find('?') != std::string_view::npos) {
    return bad("'?' (any of) is not supported");
  }
  std::vector<Dependency> out;
  for (std::string_view clause : SplitOn(text, ',')) {
    std::vector<std::string_view> parts = SplitOn(clause, ':');
    DependencyKind kind;
    if (parts[0] == "afterok") {
      kind = DependencyKind::kAfterOk;
    } else if (parts[0] == "afterany") {
      kind = DependencyKind::kAfterAny;
    } else if (parts[0] == "afternotok") {
      kind = DependencyKind::kAfterNotOk;
    } else {
      return bad("'" + std::string(parts[0]) + "' is not a dependency type");
    }
    if (parts.size() < 2) return bad("'" + std::string(clause) + "' names no job");
    for (size_t i = 1; i < parts.size(); ++i) {
      std::string_view target = parts[i];
      Dependency dep{kind, JobId(0), std::nullopt};
      const size_t underscore = target.find('_');
      auto id = Number(target.substr(0, underscore));
      if (!id || *id < 1) return bad("'" + std::string(target) + "' is not a job id");
      dep.job = JobId(*id);
      if (underscore != std::string_view::npos) {
        auto index = Number(target.substr(underscore + 1));
        if (!index || *index > kMaxArrayIndex) {
          return bad("'" + std::string(target) + "' is not ARRAY_INDEX");
        }
        dep.array_index = static_cast<int>(*index);
      }
      if (std::find(out.begin(), out.end(), dep) != out.end()) continue;
      out.push_back(dep);
      if (out.size() > static_cast<size_t>(kMaxDependencies)) {
        return bad("more than " + std::to_string(kMaxDependencies) + " jobs");
      }
    }
  }
  return out;
}

std::string_view DependencyKindName(DependencyKind kind) {
  switch (kind) {
    case DependencyKind::kAfterOk:
      return "afterok";
    case DependencyKind::kAfterAny:
      return "afterany";
    case DependencyKind::kAfterNotOk:
      return "afternotok";
  }
  return "?";
}

std::string TargetName(const Dependency& dep) {
  std::string out = std::to_string(dep.job.value());
  if (dep.array_index) out += "_" + std::to_string(*dep.array_index);
  return out;
}

std::string FormatDependency(const Dependency& dep) {
  return std::string(DependencyKindName(dep.kind)) + ":" + TargetName(dep);
}

std::string FormatDependencies(const std::vector<Dependency>& deps) {
  std::string out;
  for (const Dependency& d : deps) out += (out.empty() ? "" : ",") + FormatDependency(d);
  return out;
}

std::string TaskName(JobId id, const std::optional<ArrayTask>& array) {
  if (!array) return std::to_string(id.value());
  return std::to_string(array->array_id.value()) + "_" + std::to_string(array->index);
}

}  // namespace podsched::core
