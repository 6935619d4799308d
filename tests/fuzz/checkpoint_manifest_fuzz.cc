// A checkpoint's manifest as read back from object storage (DecodeManifest), then the reads a
// restoring rank would plan from it, and checkpoint directory names.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "worker/train/checkpoint.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)train::ParseCkptDirName(bytes);
  auto m = train::DecodeManifest(bytes);
  if (!m) return 0;
  (void)train::EncodeManifest(*m);
  for (int t = 0; t < static_cast<int>(m->tensors.size()); ++t) {
    (void)train::PlanTensorRead(*m, t, 0, static_cast<size_t>(m->num_params));
  }
  return 0;
}
