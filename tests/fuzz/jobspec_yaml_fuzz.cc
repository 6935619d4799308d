// podctl's job spec file (`podctl submit -f job.yaml`): ParseJobSpecYaml.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scheduler/ctl/jobspec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)podsched::ctl::ParseJobSpecYaml(
      std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
