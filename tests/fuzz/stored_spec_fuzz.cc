// Stored job specs (CBOR) and host lists (JSON) as the job database decodes them
// (store/jobdb/codec.h): a torn or corrupt row must give an error, never a crash. What decodes
// must encode and decode to the same spec.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "store/jobdb/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto spec = podsched::jobdb::DecodeSpec(bytes)) {
    auto again = podsched::jobdb::DecodeSpec(podsched::jobdb::EncodeSpec(*spec));
    if (!again || *again != *spec) __builtin_trap();
  }
  if (auto hosts = podsched::jobdb::DecodeHosts(bytes)) {
    auto again = podsched::jobdb::DecodeHosts(podsched::jobdb::EncodeHosts(*hosts));
    if (!again || *again != *hosts) __builtin_trap();
  }
  return 0;
}
