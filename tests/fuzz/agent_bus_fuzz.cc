// What podworker receives on the bus: ParseEnvelope, then the validation of its body
// (ValidateLaunch for a Launch to hosts 0-3, ValidateJobControl for Preempt/Kill).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "worker/agent/bus_validate.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<int32_t> kMyHosts = {0, 1, 2, 3};
  bus::Envelope e;
  if (agent::ParseEnvelope(std::string_view(reinterpret_cast<const char*>(data), size), e)) {
    return 0;
  }
  switch (e.body_case()) {
    case bus::Envelope::kLaunch:
      (void)agent::ValidateLaunch(e.launch(), kMyHosts);
      for (const auto& [name, value] : e.launch().env()) (void)agent::IsReservedEnvName(name);
      break;
    case bus::Envelope::kPreempt:
      (void)agent::ValidateJobControl(e.preempt().job(), std::nullopt);
      (void)agent::ValidateJobControl(e.preempt().job(), int64_t{1});
      break;
    case bus::Envelope::kKill:
      (void)agent::ValidateJobControl(e.kill().job(), int64_t{1});
      break;
    default:
      break;
  }
  return 0;
}
