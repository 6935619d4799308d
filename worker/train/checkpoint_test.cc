#include "worker/train/checkpoint.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "common/hash.h"
#include "worker/train/checkpoint_store.h"
#include "worker/train/memory_store_for_test.h"

namespace podsched::train {
namespace {

constexpr size_t kParams = 103;

std::vector<float> Tensor(int t) {
  std::vector<float> v(kParams);
  for (size_t i = 0; i < kParams; ++i) v[i] = static_cast<float>(t * 1000 + i) + 0.25f;
  return v;
}

// Saves a checkpoint of the tensors Tensor(0..2) (adam) as `world` shards and commits it.
Manifest Save(MemoryStore& store, CkptId id, int world, bool commit = true) {
  Manifest m;
  m.job = "job";
  m.id = id;
  m.world_size = world;
  m.optimizer.kind = OptimizerKind::kAdam;
  m.allreduce = "exact";
  m.global_batch = 8;
  m.seed = 4;
  m.data_cursor = id.step * 8;
  m.data_source = "generated";
  m.num_params = kParams;
  m.tensors = TensorNames(m.optimizer.kind);
  const std::vector<std::vector<float>> all{Tensor(0), Tensor(1), Tensor(2)};
  for (int r = 0; r < world; ++r) {
    const ShardRange sh = ShardOf(kParams, world, r);
    std::vector<std::span<const float>> parts;
    for (auto& t : all) parts.push_back(std::span<const float>(t).subspan(sh.begin, sh.size()));
    auto e = WriteShard(store, CkptPrefix("job", id) + ShardName(r, world), EncodeShard(parts), {});
    EXPECT_TRUE(e);
    e->param_begin = sh.begin;
    e->param_end = sh.end;
    m.shards.push_back(*e);
  }
  if (commit) {
    EXPECT_TRUE(CommitManifest(store, m).ok());
  }
  return m;
}

std::optional<CkptId> Latest(MemoryStore& store, std::vector<std::string>* rejected = nullptr) {
  auto m = FindLatestCheckpoint(store, "job", rejected);
  EXPECT_TRUE(m);
  if (!*m) return std::nullopt;
  return (*m)->id;
}

TEST(CheckpointTest, DirectoryNamesRoundTripAndRejectJunk) {
  EXPECT_EQ(CkptDirName({3, 120}), "ckpt-3-120");
  EXPECT_EQ(ParseCkptDirName("ckpt-3-120"), (CkptId{3, 120}));
  for (auto bad : {"ckpt-3", "ckpt--1-2", "ckpt-a-1", "ckpt-1-2x", "xckpt-1-2", "ckpt-1-"}) {
    EXPECT_FALSE(ParseCkptDirName(bad)) << bad;
  }
  EXPECT_LT((CkptId{1, 900}), (CkptId{2, 10}));
}

TEST(CheckpointTest, ManifestRoundTripsAndRejectsTampering) {
  MemoryStore store;
  const Manifest m = Save(store, {2, 40}, 4);
  const std::string bytes = EncodeManifest(m);
  auto back = DecodeManifest(bytes);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->id, m.id);
  EXPECT_EQ(back->shards.size(), 4u);
  EXPECT_EQ(back->shards[2].checksum, m.shards[2].checksum);
  ASSERT_TRUE(m.shards[2].checksum.crc32c.has_value()) << "written with CRC-32C (format v2)";
  EXPECT_EQ(back->optimizer, m.optimizer);
  std::string tampered = bytes;
  tampered.replace(tampered.find("\"step\": 40"), 10, "\"step\": 41");
  auto bad = DecodeManifest(tampered);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), StatusCode::kDataLoss);
  EXPECT_FALSE(DecodeManifest("{not json"));
  EXPECT_FALSE(DecodeManifest(bytes.substr(0, bytes.size() / 2)));
}

// `manifest` (EncodeManifest's output) with `edit` applied and its checksum recomputed, as a
// writer with a bug (or a hostile one) would store it.
std::string Resealed(const std::string& manifest,
                     const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(manifest);
  j.erase("manifest_sha256");
  edit(j);
  j["manifest_sha256"] = Sha256Hex(j.dump());
  return j.dump();
}

// A checkpoint written before format v2 has SHA-256 shard checksums: it is still verified and
// restored (a job resumes across the upgrade), and a corrupt shard of it is still rejected.
TEST(CheckpointTest, AVersionOneCheckpointWithSha256ShardsStillRestores) {
  MemoryStore store;
  const Manifest m = Save(store, {2, 40}, 2, /*commit=*/false);
  const std::string v1 = Resealed(EncodeManifest(m), [&store](nlohmann::json& j) {
    j["format"] = "podtrain-checkpoint-v1";
    for (nlohmann::json& shard : j["shards"]) {
      shard.erase("crc32c");
      shard["sha256"] =
          Sha256Hex(store.objects.at("job/ckpt-2-40/" + shard["name"].get<std::string>()));
    }
  });
  store.objects["job/ckpt-2-40/manifest"] = v1;
  auto back = DecodeManifest(v1);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_FALSE(back->shards[0].checksum.crc32c.has_value());
  EXPECT_EQ(Latest(store), (CkptId{2, 40}));
  auto v = ReadTensor(store, *back, 1, 0, kParams);
  ASSERT_TRUE(v) << v.error().ToString();
  EXPECT_EQ(*v, Tensor(1));

  store.objects["job/ckpt-2-40/shard-0-of-2"][7] ^= 1;
  std::vector<std::string> rejected;
  auto latest = FindLatestCheckpoint(store, "job", &rejected);
  ASSERT_TRUE(latest);
  EXPECT_FALSE(latest->has_value());
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_NE(rejected[0].find("shard-0-of-2: sha256 does not match"), std::string::npos)
      << rejected[0];
}

// A shard's CRC-32C is 8 hex digits; anything else is DataLoss naming the field, and so is a v2
// shard without one.
TEST(CheckpointTest, AShardChecksumThatIsNotEightHexDigitsIsDataLoss) {
  MemoryStore store;
  const std::string bytes = EncodeManifest(Save(store, {2, 40}, 2));
  for (const std::string bad : {"", "1234567", "123456789", "1234567g", "-1234567", "0x123456"}) {
    auto back = DecodeManifest(
        Resealed(bytes, [&bad](nlohmann::json& j) { j["shards"][1]["crc32c"] = bad; }));
    ASSERT_FALSE(back) << bad;
    EXPECT_EQ(back.error().code(), StatusCode::kDataLoss);
    EXPECT_NE(back.error().message().find("crc32c"), std::string::npos) << back.error().message();
  }
  auto missing =
      DecodeManifest(Resealed(bytes, [](nlohmann::json& j) { j["shards"][0].erase("crc32c"); }));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("crc32c"), std::string::npos);
}

// Found by tests/fuzz (checkpoint_manifest): nlohmann's get<int>() on 1e300 is undefined
// behaviour (UBSan: outside the range of int); a negative or fractional count was accepted too.
TEST(CheckpointTest, ManifestNumbersMustBeIntegersInRange) {
  MemoryStore store;
  const std::string bytes = EncodeManifest(Save(store, {2, 40}, 2));
  ASSERT_TRUE(DecodeManifest(Resealed(bytes, [](nlohmann::json&) {})));
  for (auto edit : std::vector<std::function<void(nlohmann::json&)>>{
           [](nlohmann::json& j) { j["world_size"] = 1e300; },
           [](nlohmann::json& j) { j["world_size"] = 2.5; },
           [](nlohmann::json& j) { j["model"]["hidden"] = 4294967296; },
           [](nlohmann::json& j) { j["num_params"] = -1; },
           [](nlohmann::json& j) { j["shards"][0]["param_end"] = -1.5; }}) {
    auto bad = DecodeManifest(Resealed(bytes, edit));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), StatusCode::kDataLoss);
  }
}

// Found by the test command's fuzz step ({"format": 40, ...}): nlohmann's value("format", "")
// threw type_error.302 out of DecodeManifest. Now every field of every type is replaced by a
// value of each other JSON type, and each must come back as DataLoss naming the field.
TEST(CheckpointTest, AFieldOfAnyOtherTypeIsDataLossNamingIt) {
  MemoryStore store;
  const std::string bytes = EncodeManifest(Save(store, {2, 40}, 2));
  const nlohmann::json original = nlohmann::json::parse(bytes);
  const std::vector<nlohmann::json> others = {
      40, "x", true, nullptr, 2.5, nlohmann::json::array({1}), nlohmann::json::object({{"a", 1}})};
  int cases = 0;
  // Every leaf and container, by JSON pointer ("/optimizer/lr", "/shards/1/size").
  const nlohmann::json leaves = original.flatten();
  for (const auto& [pointer, leaf] : leaves.items()) {
    (void)leaf;
    if (pointer == "/manifest_sha256" || pointer == "/rng/algorithm" ||
        pointer == "/rng/position") {
      continue;  // not read
    }
    for (const nlohmann::json& other : others) {
      nlohmann::json::json_pointer at(pointer);
      const nlohmann::json& was = original.at(at);
      if (was.type() == other.type()) continue;
      // A number for a number is well-typed, except a fraction where an integer belongs.
      if (was.is_number() && other.is_number() &&
          !(other.is_number_float() && !was.is_number_float())) {
        continue;
      }
      const std::string field = pointer.substr(1);
      auto bad = DecodeManifest(Resealed(bytes, [&](nlohmann::json& j) { j[at] = other; }));
      ++cases;
      ASSERT_FALSE(bad) << pointer << " = " << other.dump();
      EXPECT_EQ(bad.error().code(), StatusCode::kDataLoss) << pointer;
      // "/shards/1/size" is named "shards[1].size"; "/tensors/0" "tensors[0]".
      std::string name = field.substr(0, field.find('/'));
      EXPECT_NE(bad.error().message().find(name), std::string::npos)
          << pointer << " = " << other.dump() << " gave: " << bad.error().message();
    }
  }
  EXPECT_GT(cases, 100);
  auto format = DecodeManifest(Resealed(bytes, [](nlohmann::json& j) { j["format"] = 40; }));
  ASSERT_FALSE(format);
  EXPECT_EQ(format.error().message(), "manifest: format must be a string, not an integer");
}

// Seen beside that finding: a shard size compared after wrapping, so 2^62 parameters passed as
// a 0-byte shard.
TEST(CheckpointTest, ManifestShardSizesDoNotWrap) {
  MemoryStore store;
  const std::string bytes = EncodeManifest(Save(store, {2, 40}, 1));
  auto bad = DecodeManifest(Resealed(bytes, [](nlohmann::json& j) {
    j["num_params"] = uint64_t{1} << 62;
    j["shards"][0]["param_end"] = uint64_t{1} << 62;
    j["shards"][0]["size"] = 0;
  }));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), StatusCode::kDataLoss);
}

TEST(CheckpointTest, RestoreReshardsToAnyWorldSize) {
  MemoryStore store;
  const Manifest m = Save(store, {0, 10}, 4);
  for (int world : {1, 2, 3, 5, 8}) {
    for (int r = 0; r < world; ++r) {
      const ShardRange sh = ShardOf(kParams, world, r);
      for (int t = 0; t < 3; ++t) {
        auto v = ReadTensor(store, m, t, sh.begin, sh.end);
        ASSERT_TRUE(v) << v.error().ToString();
        const std::vector<float> want = Tensor(t);
        EXPECT_EQ(*v, std::vector<float>(want.begin() + sh.begin, want.begin() + sh.end));
      }
    }
  }
}

TEST(CheckpointTest, RestorePicksNewestCompleteCheckpoint) {
  MemoryStore store;
  EXPECT_EQ(Latest(store), std::nullopt);
  Save(store, {0, 10}, 2);
  Save(store, {0, 20}, 4);
  Save(store, {0, 30}, 4, /*commit=*/false);  // torn: shards but no manifest
  EXPECT_EQ(Latest(store), (CkptId{0, 20}));

  // A shard that does not match its checksum makes the manifest fail verification.
  store.objects["job/ckpt-0-20/shard-1-of-4"][5] ^= 1;
  std::vector<std::string> rejected;
  EXPECT_EQ(Latest(store, &rejected), (CkptId{0, 10}));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_NE(rejected[0].find("shard-1-of-4: crc32c does not match"), std::string::npos)
      << rejected[0];

  // A missing shard, and a corrupted manifest, are rejected too.
  Save(store, {0, 40}, 2);
  store.objects.erase("job/ckpt-0-40/shard-0-of-2");
  Save(store, {0, 50}, 2);
  store.objects["job/ckpt-0-50/manifest"].insert(3, " ");
  store.objects["job/ckpt-0-50/manifest"][30] ^= 1;
  EXPECT_EQ(Latest(store), (CkptId{0, 10}));
}

TEST(CheckpointTest, NewerEpochWinsAndFencesOlderCommits) {
  MemoryStore store;
  Save(store, {1, 100}, 2);
  Save(store, {2, 20}, 2);
  EXPECT_EQ(Latest(store), (CkptId{2, 20}));
  // A zombie of epoch 1 tries to commit a later step: refused, and never chosen anyway.
  Manifest zombie = Save(store, {1, 200}, 2, /*commit=*/false);
  const Status s = CommitManifest(store, zombie);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("fenced"), std::string::npos);
  EXPECT_FALSE(store.objects.contains("job/ckpt-1-200/manifest"));
  // Even if it got its manifest in before the check (a race), order keeps epoch 2.
  ASSERT_TRUE(store.Put("job/ckpt-1-200/manifest", EncodeManifest(zombie)).ok());
  EXPECT_EQ(Latest(store), (CkptId{2, 20}));
}

TEST(CheckpointTest, GarbageCollectionKeepsTheLastK) {
  MemoryStore store;
  for (int s = 1; s <= 5; ++s) Save(store, {0, s * 10}, 2);
  Save(store, {0, 25}, 2, /*commit=*/false);  // torn, older than the kept ones
  Save(store, {0, 60}, 2, /*commit=*/false);  // torn, newer: maybe still being written
  auto removed = CollectGarbage(store, "job", 3);
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, 3);  // ckpt-0-10, ckpt-0-20, ckpt-0-25
  std::vector<CkptId> left;
  auto listing = store.List("job/");
  for (auto& d : GroupCheckpoints(*listing, "job")) left.push_back(d.id);
  EXPECT_EQ(left, (std::vector<CkptId>{{0, 60}, {0, 50}, {0, 40}, {0, 30}}));
  EXPECT_EQ(Latest(store), (CkptId{0, 50}));
}

TEST(CheckpointTest, Sha256MatchesKnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace podsched::train

namespace podsched::train {
namespace {

TEST(CheckpointTest, RanksSplitShardVerification) {
  MemoryStore store;
  const Manifest m = Save(store, {0, 10}, 4);
  store.objects["job/ckpt-0-10/shard-1-of-4"][0] ^= 1;
  // Two verifying ranks: rank 0 checks shards 0 and 2, rank 1 checks 1 and 3.
  EXPECT_TRUE(VerifyCheckpointShards(store, m, 0, 2).ok());
  const Status s = VerifyCheckpointShards(store, m, 1, 2);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("shard-1-of-4"), std::string::npos);
  // More verifying ranks than shards: the extra ranks have nothing to check.
  EXPECT_TRUE(VerifyCheckpointShards(store, m, 5, 8).ok());
  auto listed = ListCommittedManifests(store, "job", nullptr);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);  // listing does not read shards; verification does
}

// A rank's buffers for a restore at world `world` (paged in, as podtrain's Setup makes them).
struct Buffers {
  ShardRange own;
  std::vector<float> params, m1, m2;
  std::vector<std::span<float>> state;
  Buffers(int world, int rank, float fill = -1.0f)
      : own(ShardOf(kParams, world, rank)),
        params(kParams, fill),
        m1(own.size(), fill),
        m2(own.size(), fill),
        state{m1, m2} {}
  RankBuffers into() { return RankBuffers{own, params, state}; }
  // The restored state is the saved one: every parameter and this rank's range of the others.
  void ExpectRestored() const {
    EXPECT_EQ(params, Tensor(0));
    for (int t = 1; t < 3; ++t) {
      const std::vector<float> want = Tensor(t);
      EXPECT_EQ(t == 1 ? m1 : m2,
                std::vector<float>(want.begin() + own.begin, want.begin() + own.end));
    }
  }
};

// Restore reads each shard a rank verified once: the verified bytes serve its reads (here the
// store loses the shard after verification, and the rank's state still comes back whole).
TEST(CheckpointTest, ARankRestoresFromTheShardsItVerifiedWithoutReadingThemAgain) {
  for (int r = 0; r < 4; ++r) {
    MemoryStore store;
    const Manifest m = Save(store, {0, 10}, 4);
    VerifiedShards verified;
    ASSERT_TRUE(VerifyCheckpointShards(store, m, r, 4, &verified).ok());
    ASSERT_EQ(verified.held.size(), 1u);
    EXPECT_TRUE(verified.contains(ShardName(r, 4)));
    store.objects.erase("job/ckpt-0-10/" + ShardName(r, 4));
    Buffers b(4, r);
    EXPECT_EQ(ReadRankState(store, m, b.into(), nullptr).code(), StatusCode::kNotFound);
    const Status read = ReadRankState(store, m, b.into(), &verified);
    ASSERT_TRUE(read.ok()) << read.ToString();
    b.ExpectRestored();
    // Buffers of another shape are refused, not overrun.
    std::vector<float> small(kParams - 1);
    EXPECT_EQ(ReadRankState(store, m, RankBuffers{b.own, small, b.state}, &verified).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(ReadRankState(store, m, RankBuffers{b.own, b.params, std::span(b.state).first(1)},
                            &verified)
                  .code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(ReadTensorInto(store, m, 3, 0, b.params).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(ReadTensorInto(store, m, 0, 1, b.params).code(), StatusCode::kInvalidArgument);
  }
  // A failed verification keeps nothing; a kept shard shorter than the manifest says is data
  // loss, not a read past its end.
  MemoryStore store;
  const Manifest m = Save(store, {0, 10}, 2);
  store.objects["job/ckpt-0-10/shard-1-of-2"][3] ^= 1;
  VerifiedShards verified;
  EXPECT_EQ(VerifyCheckpointShards(store, m, 0, 1, &verified).code(), StatusCode::kDataLoss);
  EXPECT_TRUE(verified.empty());
  verified.held["shard-0-of-2"] = "short";
  EXPECT_EQ(ReadTensor(store, m, 0, 0, kParams, &verified).error().code(), StatusCode::kDataLoss);
}

// At the checkpoint's world size a rank's own shard is verified as it is read into the rank's
// buffers (no copy of its own), and the restore then reads only the other shards' parameters.
TEST(CheckpointTest, ARanksOwnShardIsVerifiedStraightIntoItsBuffers) {
  for (int r = 0; r < 4; ++r) {
    MemoryStore store;
    const Manifest m = Save(store, {0, 10}, 4);
    Buffers b(4, r);
    VerifiedShards verified;
    const RankBuffers into = b.into();
    ASSERT_TRUE(VerifyCheckpointShards(store, m, r, 4, &verified, &into).ok());
    EXPECT_TRUE(verified.held.empty());
    EXPECT_EQ(verified.landed, std::set<std::string>{ShardName(r, 4)});
    // Other buffers than those it was verified into read it again.
    Buffers other(4, r);
    ASSERT_TRUE(ReadRankState(store, m, other.into(), &verified).ok());
    other.ExpectRestored();
    // Already in place: the store may lose it now.
    store.objects.erase("job/ckpt-0-10/" + ShardName(r, 4));
    const Status read = ReadRankState(store, m, into, &verified);
    ASSERT_TRUE(read.ok()) << read.ToString();
    b.ExpectRestored();
    // Anything else that reads through the landed set reads the shard again (it is not held).
    EXPECT_EQ(ReadTensor(store, m, 0, 0, kParams, &verified).error().code(), StatusCode::kNotFound);
  }
}

// What verifying into the buffers refuses: a flipped byte, a shard longer or shorter than
// recorded. A restore at another world size (resharding) keeps the shards in memory instead.
TEST(CheckpointTest, VerifyingIntoTheBuffersRefusesWhatTheManifestDoesNotSay) {
  const std::string key = "job/ckpt-0-10/shard-1-of-2";
  for (const auto& damage : std::vector<std::function<void(std::string&)>>{
           [](std::string& b) { b[b.size() - 1] ^= 1; },  // in the last tensor's last piece
           [](std::string& b) { b += "x"; }, [](std::string& b) { b.pop_back(); }}) {
    MemoryStore store;
    const Manifest m = Save(store, {0, 10}, 2);
    damage(store.objects[key]);
    Buffers b(2, 1);
    VerifiedShards verified;
    const RankBuffers into = b.into();
    const Status s = VerifyCheckpointShards(store, m, 1, 2, &verified, &into);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
    EXPECT_NE(s.message().find("shard-1-of-2"), std::string::npos) << s.ToString();
    EXPECT_TRUE(verified.empty());
  }
  MemoryStore store;
  const Manifest m = Save(store, {0, 10}, 4);
  Buffers b(2, 0);  // world 2 restoring a checkpoint of world 4
  VerifiedShards verified;
  const RankBuffers into = b.into();
  ASSERT_TRUE(VerifyCheckpointShards(store, m, 0, 2, &verified, &into).ok());
  EXPECT_TRUE(verified.landed.empty());
  EXPECT_EQ(verified.held.size(), 2u);  // shards 0 and 2
  ASSERT_TRUE(ReadRankState(store, m, into, &verified).ok());
  b.ExpectRestored();
}

}  // namespace
}  // namespace podsched::train
