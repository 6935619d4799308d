// Checkpoint layout and manifest (docs/podtrain.md, "Checkpoints"), as pure functions.
//
//   {job}/ckpt-{epoch}-{step}/shard-{r}-of-{n}   rank r's shard: for each state tensor in
//                                                manifest order ("params", then the optimizer's
//                                                "momentum" or "adam_m", "adam_v"), the float32
//                                                little-endian values of parameters
//                                                [param_begin, param_end).
//   {job}/ckpt-{epoch}-{step}/manifest           JSON, written last (see EncodeManifest).
//
// A checkpoint exists only when its manifest decodes, its own checksum matches, and every shard
// it lists is present with the recorded size and SHA-256. Checkpoints are ordered by
// (epoch, step): a checkpoint of a newer epoch (placement) wins over any of an older one, so a
// zombie of an old placement that commits late is never chosen.
//
// Thread safety: pure functions and value types.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/hash.h"
#include "common/status.h"
#include "store/objects/object_store.h"
#include "worker/train/model.h"
#include "worker/train/optimizer.h"

namespace podsched::train {

struct CkptId {
  int64_t epoch = 0;
  int64_t step = 0;
  friend auto operator<=>(const CkptId&, const CkptId&) = default;
};

std::string CkptDirName(const CkptId& id);  // "ckpt-3-120"
std::optional<CkptId> ParseCkptDirName(std::string_view name);
std::string ShardName(int rank, int world);                      // "shard-1-of-4"
std::string CkptPrefix(std::string_view job, const CkptId& id);  // "job/ckpt-3-120/"

// OK if `job` can be one key segment (non-empty, no '/', no control bytes, not "." or "..").
Status ValidateJobName(std::string_view job);

// A shard's checksum: CRC-32C since format v2 (hardware-assisted, ~4x SHA-256's speed here: a
// restore reads and checks every byte of its shard), SHA-256 in format v1, still read. It guards
// against torn and corrupt bytes; the manifest that holds it has its own SHA-256.
struct ShardChecksum {
  std::optional<uint32_t> crc32c;  // v2
  std::string sha256;              // v1: lower-case hex
  // "crc32c" or "sha256", for messages ("shard-1-of-4: crc32c does not match").
  std::string_view name() const { return crc32c ? "crc32c" : "sha256"; }
  friend bool operator==(const ShardChecksum&, const ShardChecksum&) = default;
};

// Computes a shard's checksum of the same kind as `want` (kept by reference: it must outlive the
// digest) over pieces given in order.
class ShardDigest {
 public:
  explicit ShardDigest(const ShardChecksum& want);
  ~ShardDigest();
  ShardDigest(const ShardDigest&) = delete;
  ShardDigest& operator=(const ShardDigest&) = delete;
  void Update(std::string_view piece);
  // Whether the pieces were the bytes `want` was taken of; once, after the last piece.
  bool Matches();
  // What a writer records (CRC-32C) for `bytes`.
  static ShardChecksum Of(std::string_view bytes);

 private:
  const ShardChecksum& want_;
  uint32_t crc_ = 0;
  std::unique_ptr<Sha256Hasher> sha_;  // v1 only
};

struct ShardEntry {
  std::string name;  // "shard-r-of-n"
  uint64_t param_begin = 0, param_end = 0;
  uint64_t size = 0;  // bytes
  ShardChecksum checksum;
};

struct Manifest {
  std::string job;
  CkptId id;
  int world_size = 0;
  ModelConfig model;
  OptimizerConfig optimizer;
  std::string allreduce;  // "exact" | "float"
  int global_batch = 0;
  uint64_t seed = 0;         // data, init and shuffle seed
  uint64_t data_cursor = 0;  // next global example of the stream (also the RNG position)
  std::string data_source;   // "generated" or the --data URL
  uint64_t num_params = 0;
  std::vector<std::string> tensors;
  std::vector<ShardEntry> shards;  // in rank order, covering [0, num_params) contiguously
};

// State tensor names for an optimizer, in shard order.
std::vector<std::string> TensorNames(OptimizerKind kind);

// JSON with a "manifest_sha256" field: SHA-256 of the JSON document without that field
// (nlohmann's compact dump, keys sorted).
std::string EncodeManifest(const Manifest& m);
// kDataLoss when the bytes are not a manifest, its checksum does not match, or its shards do not
// tile [0, num_params) with sizes matching the tensor count.
Result<Manifest> DecodeManifest(std::string_view bytes);

// Concatenation of the tensors' float32 values (all the same length).
std::string EncodeShard(std::span<const std::span<const float>> tensors);

// One byte range to read from a shard: `length` bytes at `offset` of `shard`, holding the
// values [dest, dest + length / 4) of the requested range (relative to its begin).
struct RangeRead {
  std::string shard;
  uint64_t offset = 0, length = 0;
  size_t dest = 0;
};
// The reads that assemble tensor `tensor` over parameters [begin, end) from the shards of `m`
// (any world size: resharding).
std::vector<RangeRead> PlanTensorRead(const Manifest& m, int tensor, size_t begin, size_t end);

// The checkpoint directories of `job` found in a listing, newest (epoch, step) first.
struct CkptDirListing {
  CkptId id;
  bool has_manifest = false;
  std::vector<std::string> keys;
};
std::vector<CkptDirListing> GroupCheckpoints(std::span<const store::ObjectInfo> objects,
                                             std::string_view job);

// Directories to delete once the checkpoints in `dirs` (newest first) are known: everything
// older than the `keep`-th newest directory that has a manifest, committed or torn.
std::vector<CkptDirListing> SelectGarbage(const std::vector<CkptDirListing>& dirs, int keep);

}  // namespace podsched::train
