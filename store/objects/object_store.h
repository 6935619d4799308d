// ObjectStore: where checkpoints, data shards and job logs live.
//
// One interface, two backends chosen by URL:
//   file:///abs/dir             the embedded default. Put writes a temp file, fsyncs it, renames
//                               it into place and fsyncs the directory: a reader sees the old
//                               object or the new one, never a torn one.
//   s3://BUCKET/PREFIX?endpoint=http://127.0.0.1:9000&region=us-east-1
//                               the S3 REST API with Signature V4 (AWS, GCS interop, Ceph RGW,
//                               Swift s3api, MinIO). Credentials from the URL query
//                               (access_key, secret_key), else AWS_ACCESS_KEY_ID /
//                               AWS_SECRET_ACCESS_KEY; endpoint and region also from
//                               AWS_ENDPOINT_URL / AWS_REGION. Path-style by default;
//                               `addressing=virtual` for virtual-host style.
//
// Keys are relative paths of '/'-separated segments: no empty segment, no "." or "..", no
// leading '/', no NUL or control bytes, at most 1024 bytes. Every call validates its key.
//
// Errors: kNotFound for a missing object, kInvalidArgument for a bad key or URL,
// kPermissionDenied for rejected credentials, kUnavailable for a server that did not answer
// after retries, kDataLoss for a short or corrupt read, kInternal otherwise.
//
// Thread safety: a store may be used from several threads at once; a writer by one thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace podsched::store {

struct ObjectInfo {
  std::string key;   // relative to the store's root / prefix
  uint64_t size = 0;
};

// A streaming upload. Nothing is visible under the key until Commit() succeeds; a writer
// destroyed without Commit() aborts (removes its temp file or aborts its multipart upload).
class ObjectWriter {
 public:
  virtual ~ObjectWriter() = default;
  virtual Status Append(std::string_view bytes) = 0;
  virtual Status Commit() = 0;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // The URL this store was opened with (credentials removed).
  virtual std::string url() const = 0;

  // Writes a whole object atomically (replaces an existing one).
  virtual Status Put(std::string_view key, std::string_view bytes) = 0;
  // Streaming put; multipart upload on s3 for large objects.
  virtual Result<std::unique_ptr<ObjectWriter>> NewWriter(std::string_view key) = 0;
  virtual Result<std::string> Get(std::string_view key) = 0;
  // Bytes [offset, offset + length) of an object; kInvalidArgument past its end.
  virtual Result<std::string> GetRange(std::string_view key, uint64_t offset,
                                       uint64_t length) = 0;
  // The same range, read into `dest` (dest.size() bytes) instead of a buffer of its own: a
  // restore of hundreds of MB then touches no fresh memory but its destination. The default
  // copies GetRange's result; file:// reads straight into `dest`.
  // (Inline: users of the interface alone, such as the checkpoint code's tests with their
  // in-memory store, need not link the backends.)
  virtual Status ReadRange(std::string_view key, uint64_t offset, std::span<char> dest) {
    auto bytes = GetRange(key, offset, dest.size());
    if (!bytes) return bytes.error();
    if (bytes->size() != dest.size()) {
      return ToStatus(DataLoss("short read of '" + std::string(key) + "'"));
    }
    std::memcpy(dest.data(), bytes->data(), dest.size());
    return Status::Ok();
  }
  virtual Result<ObjectInfo> Head(std::string_view key) = 0;
  // Every object whose key starts with `prefix`, sorted by key.
  virtual Result<std::vector<ObjectInfo>> List(std::string_view prefix) = 0;
  // Removes an object; removing a missing one is not an error.
  virtual Status Delete(std::string_view key) = 0;
};

// Opens a store from its URL (see above). Errors name what is wrong with the URL.
Result<std::unique_ptr<ObjectStore>> OpenObjectStore(std::string_view url);

// OK when `key` is a valid key (see above), else kInvalidArgument saying why.
Status ValidateKey(std::string_view key);

}  // namespace podsched::store
