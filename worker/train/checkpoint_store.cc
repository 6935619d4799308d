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
  // The checksum runs on a thread of its own while the bytes are written (both only read
  // `bytes`): in sequence, SHA-256 (~1.6 GB/s here) added a third to a write at page-cache speed;
  // CRC-32C is ~4x faster but still a pass over the shard.
  std::future<ShardChecksum> checksum =
      std::async(std::launch::async, [bytes] { return ShardDigest::Of(bytes); });
  Status written = Status::Ok();
  for (size_t off = 0; off < bytes.size() && written.ok(); off += kChunk) {
    written = (*writer)->Append(bytes.substr(off, kChunk));
    if (written.ok() && between_chunks) between_chunks();
  }
  if (written.ok()) written = (*writer)->Commit();
  ShardChecksum sum = checksum.get();  // joined before returning: the thread reads `bytes`
  if (!written.ok()) return std::unexpected(written.WithContext("writing " + key));
  ShardEntry e;
  e.name = key.substr(key.rfind('/') + 1);
  e.size = bytes.size();
  e.checksum = std::move(sum);
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

namespace {

// OK when `into` is shaped for `m`: every parameter, and the rank's range of each other tensor.
Status CheckShape(const Manifest& m, const RankBuffers& into) {
  if (into.params.size() != m.num_params || into.state.size() + 1 != m.tensors.size()) {
    return ToStatus(InvalidArgument(
        "checkpoint " + CkptDirName(m.id) + " has " + std::to_string(m.num_params) +
        " parameters and " + std::to_string(m.tensors.size()) + " tensors; this run holds " +
        std::to_string(into.params.size()) + " and " + std::to_string(into.state.size() + 1)));
  }
  for (std::span<float> t : into.state) {
    if (t.size() != into.own.size()) {
      return ToStatus(
          InvalidArgument("the optimizer state buffer does not match the rank's range"));
    }
  }
  return Status::Ok();
}

// Whether shard `s` of `m` is exactly the rank's own range of buffers shaped for `m`.
bool LandsIn(const Manifest& m, const ShardEntry& s, const RankBuffers& into) {
  return s.param_begin == into.own.begin && s.param_end == into.own.end && CheckShape(m, into).ok();
}

// "shard-1-of-4: crc32c does not match".
Status Mismatch(const ShardEntry& s) {
  return ToStatus(DataLoss(s.name + ": " + std::string(s.checksum.name()) + " does not match"));
}

// The tensors of shard `s` (tensor-major, as EncodeShard lays them out) read into the rank's
// buffers a piece at a time, each piece checked right after it is read, while it is in cache.
Status ReadShardInto(store::ObjectStore& store, const std::string& key, const ShardEntry& s,
                     const RankBuffers& into) {
  auto info = store.Head(key);
  if (!info) return info.error();
  if (info->size != s.size) {
    return ToStatus(DataLoss(s.name + ": size " + std::to_string(info->size) + " != recorded " +
                             std::to_string(s.size)));
  }
  auto bytes_of = [](std::span<float> t) {
    return std::span<char>(reinterpret_cast<char*>(t.data()), t.size_bytes());
  };
  std::vector<std::span<char>> tensors{
      bytes_of(into.params.subspan(into.own.begin, into.own.size()))};
  for (std::span<float> t : into.state) tensors.push_back(bytes_of(t));
  ShardDigest digest(s.checksum);
  uint64_t offset = 0;
  for (std::span<char> t : tensors) {
    for (size_t done = 0; done < t.size(); done += kChunk) {
      const std::span<char> piece = t.subspan(done, std::min(kChunk, t.size() - done));
      if (Status r = store.ReadRange(key, offset, piece); !r.ok()) return r;
      digest.Update(std::string_view(piece.data(), piece.size()));
      offset += piece.size();
    }
  }
  if (!digest.Matches()) return Mismatch(s);
  return Status::Ok();
}

}  // namespace

Status VerifyCheckpointShards(store::ObjectStore& store, const Manifest& m, int offset, int stride,
                              VerifiedShards* keep, const RankBuffers* into) {
  const std::string prefix = CkptPrefix(m.job, m.id);
  VerifiedShards verified;
  for (size_t i = offset; i < m.shards.size(); i += stride) {
    const ShardEntry& s = m.shards[i];
    if (keep != nullptr && into != nullptr && LandsIn(m, s, *into)) {
      if (Status r = ReadShardInto(store, prefix + s.name, s, *into); !r.ok()) {
        return r.WithContext(s.name);
      }
      verified.landed.insert(s.name);
      verified.landed_in = into->Addresses();
      continue;
    }
    auto bytes = store.Get(prefix + s.name);
    if (!bytes) return bytes.error().WithContext(s.name);
    if (bytes->size() != s.size) {
      return ToStatus(DataLoss(s.name + ": size " + std::to_string(bytes->size()) +
                               " != recorded " + std::to_string(s.size)));
    }
    ShardDigest digest(s.checksum);
    digest.Update(*bytes);
    if (!digest.Matches()) return Mismatch(s);
    if (keep != nullptr) verified.held.emplace(s.name, std::move(*bytes));
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

namespace {

// ReadTensorInto; with `landed_in_place` (ReadRankState, whose buffers VerifyCheckpointShards
// read the landed shards into) the landed shards are skipped, else they are read again.
Status ReadTensorPieces(store::ObjectStore& store, const Manifest& m, int tensor, size_t begin,
                        std::span<float> dest, const VerifiedShards* verified,
                        bool landed_in_place) {
  if (tensor < 0 || static_cast<size_t>(tensor) >= m.tensors.size() || begin > m.num_params ||
      dest.size() > m.num_params - begin) {
    return ToStatus(InvalidArgument("tensor " + std::to_string(tensor) + " [" +
                                    std::to_string(begin) + ", +" + std::to_string(dest.size()) +
                                    ") is not in checkpoint " + CkptDirName(m.id)));
  }
  const std::string prefix = CkptPrefix(m.job, m.id);
  for (const RangeRead& r : PlanTensorRead(m, tensor, begin, begin + dest.size())) {
    if (verified != nullptr) {
      if (landed_in_place && verified->landed.contains(r.shard)) continue;
      auto held = verified->held.find(r.shard);
      if (held != verified->held.end()) {
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

}  // namespace

Status ReadTensorInto(store::ObjectStore& store, const Manifest& m, int tensor, size_t begin,
                      std::span<float> dest, const VerifiedShards* verified) {
  return ReadTensorPieces(store, m, tensor, begin, dest, verified, false);
}

Result<std::vector<float>> ReadTensor(store::ObjectStore& store, const Manifest& m, int tensor,
                                      size_t begin, size_t end, const VerifiedShards* verified) {
  std::vector<float> out(end - begin);
  if (Status s = ReadTensorInto(store, m, tensor, begin, out, verified); !s.ok()) {
    return std::unexpected(s);
  }
  return out;
}

Status ReadRankState(store::ObjectStore& store, const Manifest& m, const RankBuffers& into,
                     const VerifiedShards* verified) {
  if (Status s = CheckShape(m, into); !s.ok()) return s;  // the range itself: ReadTensorPieces
  const bool in_place = verified != nullptr && verified->landed_in == into.Addresses();
  if (Status s = ReadTensorPieces(store, m, 0, 0, into.params, verified, in_place); !s.ok()) {
    return s;
  }
  for (size_t t = 1; t < m.tensors.size(); ++t) {
    Status s = ReadTensorPieces(store, m, static_cast<int>(t), into.own.begin, into.state[t - 1],
                                verified, in_place);
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
