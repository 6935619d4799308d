// Progress reports as podworker receives them: UDP datagrams (ParseProgressJson) and rank 0's
// POD_PROGRESS stdout lines (ParseProgressLine), plus the endpoint and checkpoint names.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "worker/progress/progress_wire.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto p = progress::ParseProgressJson(bytes)) {
    (void)progress::ProgressJson(*p);
    (void)progress::ReportedCheckpointStep(*p);
  }
  if (auto p = progress::ParseProgressLine(bytes)) (void)progress::ProgressLine(*p);
  (void)progress::CheckpointStep(bytes);
  (void)progress::ParseProgressEndpoint(bytes);
  return 0;
}
