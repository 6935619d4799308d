#include "worker/train/checkpoint_store.h"

#include <algorithm>
#include <cstring>
#include <future>

namespace podsched::train {
namespace {

// Appends of 1 MiB (podtrain's --write-delay-ms sleeps after each: docs/podtrain.md).
constexpr size_t kChunk = 1 << 20;

}  // namespace

Result<ShardEntry> WriteShard(store::ObjectStore& store, const std::string& key,
                              std::string_view bytes, const std::function<void()>& between_chunks) {
  auto writer = store.NewWriter(key);
  if (!writer) return std::unexpected(writer.error().WithContext("writing " + key));
  // The hash runs on a thread of its own while the bytes are written (both only read `bytes`):
  // in sequence, SHA-256 (~1.6 GB/s here) added a third to a write at page-cache speed.
  std::future<std::string> hash = std::async(std::launch::async, [bytes] {
    Sha256Hasher hasher;
    hasher.Update(bytes);
    return hasher.HexDigest();
  });
  Status written = Status::Ok();
  for (size_t off = 0; off < bytes.size() && written.ok(); off += kChunk) {
    written = (*writer)->Append(bytes.substr(off, kChunk));
    if (written.ok() && between_chunks) between_chunks();
  }
  if (written.ok()) written = (*writer)->Commit();
  std::string digest = hash.get();  // joined before returning: the thread reads `bytes`
  if (!written.ok()) return std::unexpected(written.WithContext("writing " + key));
  ShardEntry e;
  e.name = key.substr(key.rfind('/') + 1);
  e.size = bytes.size();
  e.sha256 = std::move(digest);
  return e;
}

Status CommitManifest(store::ObjectStore& store, const Manifest& m) {
  auto listing = store.List(m.job + "/");
  if (!listing) return listing.error().WithContext("listing " + m.job + "/");
  for (const CkptDirListing& d : GroupCheckpoints(*listing, m.job)) {
    if (d.has_manifest && d.id.epoch > m.id.epoch) {
      return ToStatus(FailedPrecondition(
          "fenced: job " + m.job + " has a checkpoint of newer epoch " +
          std::to_string(d.id.epoch) + " (" + CkptDirName(d.id) + "); this process runs epoch " +
          std::to_string(m.id.epoch) + " and must not commit"));
    }
  }
  const std::string key = CkptPrefix(m.job, m.id) + "manifest";
  if (Status s = store.Put(key, EncodeManifest(m)); !s.ok()) return s.WithContext("writing " + key);
  return Status::Ok();
}

Status VerifyCheckpoint(store::ObjectStore& store, const Manifest& m) {
  return VerifyCheckpointShards(store, m, 0, 1);
}

Status VerifyCheckpointShards(store::ObjectStore& store, const Manifest& m, int offset,
                              int stride, VerifiedShards* keep) {
  const std::string prefix = CkptPrefix(m.job, m.id);
  VerifiedShards verified;
  for (size_t i = offset; i < m.shards.size(); i += stride) {
    const ShardEntry& s = m.shards[i];
    auto bytes = store.Get(prefix + s.name);
    if (!bytes) return bytes.error().WithContext(s.name);
    if (bytes->size() != s.size) {
      return ToStatus(DataLoss(s.name + ": size " + std::to_string(bytes->size()) +
                               " != recorded " + std::to_string(s.size)));
    }
    if (Sha256Hex(*bytes) != s.sha256)
      return ToStatus(DataLoss(s.name + ": sha256 does not match"));
    if (keep != nullptr) verified.emplace(s.name, std::move(*bytes));
  }
  if (keep != nullptr) *keep = std::move(verified);
  return Status::Ok();
}

Result<std::vector<Manifest>> ListCommittedManifests(store::ObjectStore& store,
                                                     const std::string& job,
                                                     std::vector<std::string>* rejected) {
  auto listing = store.List(job + "/");
  if (!listing) return std::unexpected(listing.error().WithContext("listing " + job + "/"));
  std::vector<Manifest> out;
  for (const CkptDirListing& d : GroupCheckpoints(*listing, job)) {
    if (!d.has_manifest) continue;
    auto reject = [&](const Status& why) {
      if (rejected) rejected->push_back(CkptDirName(d.id) + ": " + why.message());
    };
    auto bytes = store.Get(CkptPrefix(job, d.id) + "manifest");
    if (!bytes) {
      if (bytes.error().code() != StatusCode::kNotFound) return std::unexpected(bytes.error());
      reject(bytes.error());  // deleted between List and Get (garbage collection)
      continue;
    }
    auto m = DecodeManifest(*bytes);
    if (!m) {
      reject(m.error());
    } else if (m->job != job || m->id != d.id) {
      reject(Status(StatusCode::kDataLoss, "manifest names another job or checkpoint"));
    } else {
      out.push_back(std::move(*m));
    }
  }
  return out;
}

Result<std::optional<Manifest>> FindLatestCheckpoint(store::ObjectStore& store,
                                                     const std::string& job,
                                                     std::vector<std::string>* rejected) {
  auto candidates = ListCommittedManifests(store, job, rejected);
  if (!candidates) return std::unexpected(candidates.error());
  for (Manifest& m : *candidates) {
    const Status s = VerifyCheckpoint(store, m);
    if (s.ok()) return std::optional<Manifest>(std::move(m));
    if (s.code() != StatusCode::kNotFound && s.code() != StatusCode::kDataLoss) {
      return std::unexpected(s);
    }
    if (rejected) rejected->push_back(CkptDirName(m.id) + ": " + s.message());
  }
  return std::optional<Manifest>();
}

Status ReadTensorInto(store::ObjectStore& store, const Manifest& m, int tensor, size_t begin,
                      std::span<float> dest, const VerifiedShards* verified) {
  if (tensor < 0 || static_cast<size_t>(tensor) >= m.tensors.size() || begin > m.num_params ||
      dest.size() > m.num_params - begin) {
    return ToStatus(InvalidArgument("tensor " + std::to_string(tensor) + " [" +
                                    std::to_string(begin) + ", +" + std::to_string(dest.size()) +
                                    ") is not in checkpoint " + CkptDirName(m.id)));
  }
  const std::string prefix = CkptPrefix(m.job, m.id);
  for (const RangeRead& r : PlanTensorRead(m, tensor, begin, begin + dest.size())) {
    if (verified != nullptr) {
      auto held = verified->find(r.shard);
      if (held != verified->end()) {
        if (held->second.size() < r.offset + r.length) {
          return ToStatus(DataLoss(prefix + r.shard + ": shorter than its manifest says"));
        }
        std::memcpy(dest.data() + r.dest, held->second.data() + r.offset, r.length);
        continue;
      }
    }
    // Straight into the tensor: no buffer of its own to fault in and copy from.
    const std::span<char> bytes(reinterpret_cast<char*>(dest.data() + r.dest), r.length);
    if (Status s = store.ReadRange(prefix + r.shard, r.offset, bytes); !s.ok()) {
      return s.WithContext(prefix + r.shard);
    }
  }
  return Status::Ok();
}

Result<std::vector<float>> ReadTensor(store::ObjectStore& store, const Manifest& m, int tensor,
                                      size_t begin, size_t end, const VerifiedShards* verified) {
  std::vector<float> out(end - begin);
  if (Status s = ReadTensorInto(store, m, tensor, begin, out, verified); !s.ok()) {
    return std::unexpected(s);
  }
  return out;
}

Status ReadRankState(store::ObjectStore& store, const Manifest& m, ShardRange own,
                     const VerifiedShards* verified, std::span<float> params,
                     std::span<const std::span<float>> state) {
  if (params.size() != m.num_params || state.size() + 1 != m.tensors.size()) {
    return ToStatus(InvalidArgument(
        "checkpoint " + CkptDirName(m.id) + " has " + std::to_string(m.num_params) +
        " parameters and " + std::to_string(m.tensors.size()) + " tensors; this run holds " +
        std::to_string(params.size()) + " and " + std::to_string(state.size() + 1)));
  }
  if (Status s = ReadTensorInto(store, m, 0, 0, params, verified); !s.ok()) return s;
  for (size_t t = 1; t < m.tensors.size(); ++t) {
    if (state[t - 1].size() != own.size()) {  // the range itself: ReadTensorInto checks it
      return ToStatus(InvalidArgument("the optimizer state buffer does not match the rank's range"));
    }
    Status s = ReadTensorInto(store, m, static_cast<int>(t), own.begin, state[t - 1], verified);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Result<int> CollectGarbage(store::ObjectStore& store, const std::string& job, int keep) {
  auto listing = store.List(job + "/");
  if (!listing) return std::unexpected(listing.error().WithContext("listing " + job + "/"));
  const auto garbage = SelectGarbage(GroupCheckpoints(*listing, job), keep);
  for (const CkptDirListing& d : garbage) {
    std::vector<std::string> keys = d.keys;
    std::stable_partition(keys.begin(), keys.end(),
                          [](const std::string& k) { return k.ends_with("/manifest"); });
    for (const std::string& k : keys) {
      if (Status s = store.Delete(k); !s.ok())
        return std::unexpected(s.WithContext("deleting " + k));
    }
  }
  return static_cast<int>(garbage.size());
}

}  // namespace podsched::train
