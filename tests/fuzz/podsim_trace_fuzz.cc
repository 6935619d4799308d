// The podsim CSV trace reader (podsim replay), and writing back what it accepted.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "scheduler/sim/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  auto trace = podsched::sim::ParsePodsimCsv(in);
  if (!trace) return 0;
  std::ostringstream out;
  podsched::sim::WritePodsimCsv(trace->jobs, out);
  return 0;
}
