// The file:// backend of ObjectStore: each object is a regular file root/KEY.
//
// Durability: Put and Commit write a temp file in the object's directory, fsync it, rename it
// over the key and fsync the directory (and the parents of directories they created), so after
// a crash a reader sees the old object or the new one, never a torn one.
//
// Differences from S3, inherent to a file system: a key cannot be both an object and a
// "directory" of other keys ("a" and "a/b"); and names whose last segment starts with
// ".podsched-tmp-" are reserved for temp files (Put rejects them, List hides them). Empty
// directories left by Delete are kept (removing them would race with concurrent Puts).
#pragma once

#include <memory>
#include <string>

#include "store/objects/object_store.h"

namespace podsched::store {

// Opens (creating it and its parents if missing) the store rooted at the absolute `root`.
Result<std::unique_ptr<ObjectStore>> OpenFileStore(const std::string& root);

}  // namespace podsched::store
