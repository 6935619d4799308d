// S3 response bodies: ListObjectsV2 pages and <Error> documents (store/objects/s3_xml.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "store/objects/s3_xml.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  (void)store::ParseListObjectsV2(xml);
  (void)store::ParseS3Error(xml);
  (void)store::XmlFirst(xml, "Key");
  if (auto text = store::XmlUnescape(xml)) (void)store::XmlEscape(*text);
  return 0;
}
