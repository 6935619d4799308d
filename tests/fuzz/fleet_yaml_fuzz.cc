// A fleet file (podsim replay --fleet): ParseFleetYaml, then the fleet it describes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pod/fleet_yaml.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto pods = pod::ParseFleetYaml(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!pods) return 0;
  // A document the reader accepts builds (its promise), and its types parse against it.
  auto fleet = pod::Fleet::Create(*pods);
  if (!fleet) __builtin_trap();
  (void)fleet->ParseType("v2-32");
  (void)fleet->ParseType("v3-512");
  if (fleet->num_hosts() > 0) (void)fleet->Locate(HostId(fleet->num_hosts() - 1));
  return 0;
}
