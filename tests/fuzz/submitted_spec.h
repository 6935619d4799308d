// What SubmitJob does with a JobSpec parsed from a request body, for the fuzz targets of those
// bodies (jobspec_json, jobspec_proto): the edge's checks (SpecFromProto), then the core's
// (ValidateSpec) against a full v2 pod, and the way back (SpecToProto).
#pragma once

#include "api.pb.h"
#include "pod/pod.h"
#include "scheduler/core/spec.h"
#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::fuzz {

// The limits SubmitJob uses with the default config (Limits::max_json_depth).
inline constexpr daemon::JsonLimits kSubmitLimits{32, 64 << 10};

inline void CheckSubmittedSpec(const api::JobSpec& in) {
  static const pod::Fleet* const kPod =
      new pod::Fleet(pod::Fleet::Of(pod::Pod::Create("pod0", pod::Generation::kV2, 8, 8).value()));
  auto spec = daemon::SpecFromProto(
      in, "alice",
      daemon::CheckpointStores("file:///var/objects/checkpoints", {{"z", "s3://b/k?region=r"}}));
  if (!spec) return;
  (void)core::ValidateSpec(*spec, *kPod);
  (void)daemon::SpecToProto(*spec);
}

}  // namespace podsched::fuzz
