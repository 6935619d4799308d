#include "scheduler/core/dependency.h"

namespace podsched::core {

DependencyStatus EvaluateDependency(DependencyKind kind, const DependencyTarget& t) {
  const bool all_ended = t.ended == t.jobs;
  const int unsuccessful = t.ended - t.succeeded;
  const std::string kind_name(DependencyKindName(kind));
  switch (kind) {
    case DependencyKind::kAfterOk:
      if (unsuccessful > 0) {
        return {DependencyVerdict::kNever, t.unsuccessful + " (" + kind_name + ")"};
      }
      return {all_ended ? DependencyVerdict::kMet : DependencyVerdict::kWaiting, ""};
    case DependencyKind::kAfterAny:
      return {all_ended ? DependencyVerdict::kMet : DependencyVerdict::kWaiting, ""};
    case DependencyKind::kAfterNotOk:
      if (all_ended && unsuccessful == 0) {
        const std::string what =
            t.jobs == 1 ? "ended SUCCEEDED" : "ended with every task SUCCEEDED";
        return {DependencyVerdict::kNever, t.name + " " + what + " (" + kind_name + ")"};
      }
      return {all_ended ? DependencyVerdict::kMet : DependencyVerdict::kWaiting, ""};
  }
  return {};
}

}  // namespace podsched::core
