// The API's SubmitJob path on a body in protobuf's binary encoding (podctl's): ParseBody with
// the media type (the parse, then no unknown field and no string past the limit), the edge's
// checks (SpecFromProto), then the core's (ValidateSpec) against a full v2 pod.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/submitted_spec.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  api::JobSpec in;
  if (!daemon::ParseBody(body, daemon::kProtobufMediaType, fuzz::kSubmitLimits, &in).ok()) {
    return 0;
  }
  fuzz::CheckSubmittedSpec(in);
  return 0;
}
