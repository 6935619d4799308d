#include "store/objects/object_store.h"

#include "store/objects/file_store.h"
#include "store/objects/object_url.h"
#include "store/objects/s3_store.h"

namespace podsched::store {

Result<std::unique_ptr<ObjectStore>> OpenObjectStore(std::string_view url) {
  auto parsed = ParseObjectUrl(url, ProcessEnv());
  if (!parsed) return std::unexpected(parsed.error());
  if (parsed->file) return OpenFileStore(parsed->file->root);
  return OpenS3Store(*parsed->s3);
}

}  // namespace podsched::store
