// The Philly cluster trace reader (podsim replay --format philly).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "scheduler/sim/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  (void)podsched::sim::ParsePhilly(in, podsched::sim::PhillyOptions{});
  return 0;
}
