// The API's SubmitJob path on a body in protobuf's binary encoding (podctl's): ParseBody with
// the media type (the parse, then no unknown field and no string past the limit), the edge's
// checks (SpecFromProto), then the core's (ValidateSpec) against a full v2 pod.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api.pb.h"
#include "pod/pod.h"
#include "scheduler/core/spec.h"
#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/json_util.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const pod::Fleet* const kPod =
      new pod::Fleet(pod::Fleet::Of(pod::Pod::Create("pod0", pod::Generation::kV2, 8, 8).value()));
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  api::JobSpec in;
  // The limits SubmitJob uses with the default config (Limits::max_json_depth).
  if (!daemon::ParseBody(body, daemon::kProtobufMediaType, daemon::JsonLimits{32, 64 << 10}, &in)
           .ok()) {
    return 0;
  }
  auto spec = daemon::SpecFromProto(
      in, "alice",
      daemon::CheckpointStores("file:///var/objects/checkpoints", {{"z", "s3://b/k?region=r"}}));
  if (!spec) return 0;
  (void)core::ValidateSpec(*spec, *kPod);
  (void)daemon::SpecToProto(*spec);
  return 0;
}
