// Checkpoint operations on an ObjectStore: write a shard, commit a manifest (with the stale-epoch
// fence), find the newest checkpoint that verifies, read byte ranges, collect garbage.
//
// These use only the ObjectStore interface (tests pass an in-memory store). Calls block; the
// MPI driver runs WriteShard on a background thread for asynchronous saves.
//
// Thread safety: as safe as the store passed in; no shared state of their own.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/objects/object_store.h"
#include "worker/train/checkpoint.h"
#include "worker/train/optimizer.h"

namespace podsched::train {

// Streams `bytes` to `key` in chunks (a writer: nothing visible until Commit), hashing as it
// goes. `between_chunks`, if set, runs after each chunk (fault-injection hook for tests).
Result<ShardEntry> WriteShard(store::ObjectStore& store, const std::string& key,
                              std::string_view bytes, const std::function<void()>& between_chunks);

// Writes `m`'s manifest, the commit point of its checkpoint. Refuses with kFailedPrecondition
// ("fenced") when a manifest of a newer epoch of the same job already exists: a process of an
// older placement must not add checkpoints once a newer placement has committed. (A newer epoch
// that commits after this check still wins at restore, by (epoch, step) order.)
Status CommitManifest(store::ObjectStore& store, const Manifest& m);

// Shards read and verified, kept so that a restore does not read them again.
struct VerifiedShards {
  // Shard name -> its whole content, which matched the manifest's size and SHA-256.
  std::map<std::string, std::string> held;
  // Shards verified while they were read straight into the rank's own buffers (RankBuffers):
  // already where ReadRankState would put them, if it is given the same buffers (`landed_in`:
  // their addresses, params first; other buffers read the landed shards again).
  std::set<std::string> landed;
  std::vector<const float*> landed_in;

  bool empty() const { return held.empty() && landed.empty(); }
  bool contains(const std::string& shard) const {
    return held.contains(shard) || landed.contains(shard);
  }
};

// A rank's buffers, as ReadRankState fills them: every parameter (tensor 0) in `params`, and
// its own range `own` of each other tensor in `state[t - 1]`.
struct RankBuffers {
  ShardRange own;
  std::span<float> params;
  std::span<const std::span<float>> state;
  // The buffers' addresses, params first (VerifiedShards::landed_in).
  std::vector<const float*> Addresses() const {
    std::vector<const float*> out{params.data()};
    for (std::span<float> t : state) out.push_back(t.data());
    return out;
  }
};

// OK when every shard of `m` is present with its recorded size and SHA-256 (reads them all).
// kNotFound / kDataLoss say the checkpoint is incomplete or corrupt; other codes are store errors.
Status VerifyCheckpoint(store::ObjectStore& store, const Manifest& m);
// The same for the shards whose index % stride == offset (ranks split the verification). With
// `keep`, the verified shards' bytes go there (when every one verified).
//
// With `keep` and `into` as well, a shard that is exactly the rank's own range (a restore at
// the checkpoint's world size) is read in pieces straight into `into`'s buffers and hashed piece
// by piece, and listed in keep->landed: no memory of its own to fault in, no copy out of it.
// On a failure `into`'s buffers may hold part of a shard; a caller that goes on without this
// checkpoint must fill them again.
Status VerifyCheckpointShards(store::ObjectStore& store, const Manifest& m, int offset, int stride,
                              VerifiedShards* keep = nullptr, const RankBuffers* into = nullptr);

// The manifests of `job` that decode, match their own checksum and name their directory, newest
// (epoch, step) first. Their shards are not verified yet. Rejected ones are described in
// `rejected`.
Result<std::vector<Manifest>> ListCommittedManifests(store::ObjectStore& store,
                                                     const std::string& job,
                                                     std::vector<std::string>* rejected);

// The newest (epoch, step) checkpoint of `job` that verifies, or nullopt when there is none.
// Each rejected candidate is described in `rejected` ("ckpt-0-40: shard-1-of-4: sha256 does
// not match") so the caller can log why it fell back.
Result<std::optional<Manifest>> FindLatestCheckpoint(store::ObjectStore& store,
                                                     const std::string& job,
                                                     std::vector<std::string>* rejected);

// Tensor `tensor` over parameters [begin, begin + dest.size()) into `dest`, from byte ranges of
// the shards (resharding): from `verified` for the shards it holds, else read straight into
// `dest` from the store.
Status ReadTensorInto(store::ObjectStore& store, const Manifest& m, int tensor, size_t begin,
                      std::span<float> dest, const VerifiedShards* verified = nullptr);
// The same into a new vector of end - begin values (tests and tools; podtrain reads into the
// buffers it has: ReadRankState).
Result<std::vector<float>> ReadTensor(store::ObjectStore& store, const Manifest& m, int tensor,
                                      size_t begin, size_t end,
                                      const VerifiedShards* verified = nullptr);

// What one rank restores (Trainer::Restore), into the buffers it already has (allocated and
// paged in at start-up: a restore into fresh memory spent most of its time in the kernel zeroing
// pages): every parameter (tensor 0) into `params`, and its own range `own` of each other
// tensor of the manifest (the optimizer's state) into `state[t - 1]`. The sizes must match
// (m.num_params, own.size(), one span per tensor after the first).
// Shards in verified->landed are in place already and are not read, when `into` is the buffers
// they were verified into (VerifiedShards::landed_in); into other buffers they are read again.
Status ReadRankState(store::ObjectStore& store, const Manifest& m, const RankBuffers& into,
                     const VerifiedShards* verified);

// Deletes the directories SelectGarbage picks (manifest first, so a half-deleted checkpoint is
// never complete). Returns how many directories it removed.
Result<int> CollectGarbage(store::ObjectStore& store, const std::string& job, int keep);

}  // namespace podsched::train
