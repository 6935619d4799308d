// The API's SubmitJob path on a request body: bounded protobuf JSON parse of api::JobSpec, the
// edge's checks (SpecFromProto), then the core's (ValidateSpec) against a full v2 pod.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/submitted_spec.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  api::JobSpec in;
  if (!daemon::ParseJson(body, fuzz::kSubmitLimits, &in).ok()) return 0;
  fuzz::CheckSubmittedSpec(in);
  return 0;
}
