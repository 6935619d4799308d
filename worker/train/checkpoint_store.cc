#include "worker/train/checkpoint_store.h"

#include <algorithm>
#include <cstring>

namespace podsched::train {
namespace {

constexpr size_t kChunk = 1 << 20;

}  // namespace

Result<ShardEntry> WriteShard(store::ObjectStore& store, const std::string& key,
                              std::string_view bytes, const std::function<void()>& between_chunks) {
  auto writer = store.NewWriter(key);
  if (!writer) return std::unexpected(writer.error().WithContext("writing " + key));
  Sha256Hasher hash;
  for (size_t off = 0; off < bytes.size(); off += kChunk) {
    const std::string_view chunk = bytes.substr(off, kChunk);
    hash.Update(chunk);
    if (Status s = (*writer)->Append(chunk); !s.ok()) {
      return std::unexpected(s.WithContext("writing " + key));
    }
    if (between_chunks) between_chunks();
  }
  if (Status s = (*writer)->Commit(); !s.ok())
    return std::unexpected(s.WithContext("committing " + key));
  ShardEntry e;
  e.name = key.substr(key.rfind('/') + 1);
  e.size = bytes.size();
  e.sha256 = hash.HexDigest();
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
                              int stride) {
  const std::string prefix = CkptPrefix(m.job, m.id);
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
  }
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

Result<std::vector<float>> ReadTensor(store::ObjectStore& store, const Manifest& m, int tensor,
                                      size_t begin, size_t end) {
  std::vector<float> out(end - begin);
  const std::string prefix = CkptPrefix(m.job, m.id);
  for (const RangeRead& r : PlanTensorRead(m, tensor, begin, end)) {
    auto bytes = store.GetRange(prefix + r.shard, r.offset, r.length);
    if (!bytes) return std::unexpected(bytes.error().WithContext(prefix + r.shard));
    if (bytes->size() != r.length) return DataLoss(prefix + r.shard + ": short read");
    std::memcpy(out.data() + r.dest, bytes->data(), r.length);
  }
  return out;
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
