// A checkpoint's manifest as read back from object storage (DecodeManifest), then the reads a
// restoring rank would plan from it, and checkpoint directory names.
//
// Random bytes almost never carry a matching manifest_sha256, so each input that is a JSON object
// is also decoded once more with its checksum recomputed: that reaches the field and tiling
// checks behind it.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/hash.h"
#include "worker/train/checkpoint.h"

using namespace podsched;

namespace {

void DecodeAndPlan(std::string_view bytes) {
  auto m = train::DecodeManifest(bytes);
  if (!m) return;
  (void)train::EncodeManifest(*m);
  for (int t = 0; t < static_cast<int>(m->tensors.size()); ++t) {
    (void)train::PlanTensorRead(*m, t, 0, static_cast<size_t>(m->num_params));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)train::ParseCkptDirName(bytes);
  DecodeAndPlan(bytes);
  nlohmann::json j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    j.erase("manifest_sha256");
    j["manifest_sha256"] = Sha256Hex([&] {
      nlohmann::json without = j;
      without.erase("manifest_sha256");
      return without.dump();
    }());
    DecodeAndPlan(j.dump());
  }
  return 0;
}
