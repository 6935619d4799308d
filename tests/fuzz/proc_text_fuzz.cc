// The /proc texts a job can shape, as the root agent parses them (worker/agent/proc_text.h): the
// input is a stat line, a status file, an environ block and a tag all at once.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "worker/agent/proc_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  namespace agent = podsched::agent;
  (void)agent::ParseProcStat(text, 1);
  for (int sig : {1, 15, 64}) (void)agent::StatusHandlesSignal(text, sig);
  (void)agent::FindEnvVar(text, "PODWORKER_TAG");
  podsched::JobEpoch je;
  int32_t host = 0;
  int rank = 0;
  if (agent::ParseTag(text, je, host, &rank)) {
    // What parses must print back the same way (the tag is how the agent finds a job's
    // processes).
    podsched::JobEpoch again;
    int32_t host_again = 0;
    if (!agent::ParseTag(agent::TagValue(je, host), again, host_again) || again != je ||
        host_again != host) {
      __builtin_trap();
    }
  }
  return 0;
}
