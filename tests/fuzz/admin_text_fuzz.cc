// The small texts an admin or a client writes: key files (common/key_file.h), agents.keys
// (scheduler/daemon/agent_keys.h), object store URLs (store/objects/object_url.h), host ranges
// (common/host_list.h) and array specs (scheduler/core/dependency.h). The first byte picks the
// parser, the rest is its input.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/host_list.h"
#include "common/key_file.h"
#include "scheduler/core/dependency.h"
#include "scheduler/daemon/agent_keys.h"
#include "store/objects/object_url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      (void)podsched::ParseKeyFile(text);
      break;
    case 1:
      if (auto agents = podsched::daemon::ParseAgentKeys(text)) {
        // What is read must be written back readable (podsched agent enroll rewrites the file).
        if (!podsched::daemon::ParseAgentKeys(podsched::daemon::FormatAgentKeys(*agents))) {
          __builtin_trap();
        }
      }
      break;
    case 2:
      (void)podsched::store::ParseObjectUrl(
          text, [](std::string_view name) -> std::optional<std::string> {
            return std::string(name) + "-value";
          });
      break;
    case 3:
      if (auto hosts = podsched::ParseHostRanges(text)) {
        if (podsched::ParseHostRanges(podsched::FormatHostRanges(*hosts)) != hosts) {
          __builtin_trap();
        }
      }
      break;
    case 4:
      (void)podsched::core::ParseArraySpec(text);
      break;
  }
  return 0;
}
