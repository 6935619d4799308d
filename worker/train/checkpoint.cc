#include "worker/train/checkpoint.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/big_buffer.h"
#include "common/check.h"
#include "common/json_reader.h"
#include "store/formats/crc32c.h"

namespace podsched::train {
namespace {

using Json = nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "shards store float32 little-endian; a big-endian host needs byte swapping");

// v2: shards checked by CRC-32C (ShardChecksum); v1 (SHA-256) is still read.
constexpr std::string_view kFormat = "podtrain-checkpoint-v2";
constexpr std::string_view kFormatV1 = "podtrain-checkpoint-v1";

std::optional<int64_t> ParseNonNegative(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

ShardDigest::ShardDigest(const ShardChecksum& want) : want_(want) {
  if (!want.crc32c) sha_ = std::make_unique<Sha256Hasher>();
}

ShardDigest::~ShardDigest() = default;

void ShardDigest::Update(std::string_view piece) {
  if (sha_) {
    sha_->Update(piece);
  } else {
    crc_ = formats::Crc32cExtend(crc_, piece);
  }
}

bool ShardDigest::Matches() {
  return sha_ ? sha_->HexDigest() == want_.sha256 : crc_ == *want_.crc32c;
}

ShardChecksum ShardDigest::Of(std::string_view bytes) {
  return ShardChecksum{.crc32c = formats::Crc32c(bytes), .sha256 = {}};
}

namespace {

Json ToJson(const Manifest& m) {
  Json shards = Json::array();
  for (const ShardEntry& s : m.shards) {
    Json entry = {{"name", s.name},
                  {"param_begin", s.param_begin},
                  {"param_end", s.param_end},
                  {"size", s.size}};
    if (s.checksum.crc32c) {
      char hex[9];
      std::snprintf(hex, sizeof hex, "%08x", *s.checksum.crc32c);
      entry["crc32c"] = hex;
    } else {
      entry["sha256"] = s.checksum.sha256;
    }
    shards.push_back(std::move(entry));
  }
  return {
      {"format", kFormat},
      {"job", m.job},
      {"epoch", m.id.epoch},
      {"step", m.id.step},
      {"world_size", m.world_size},
      {"model",
       {{"input_dim", m.model.input_dim},
        {"hidden", m.model.hidden},
        {"depth", m.model.depth},
        {"classes", m.model.classes},
        {"batchnorm", m.model.batchnorm}}},
      {"optimizer",
       {{"kind", OptimizerName(m.optimizer.kind)},
        {"lr", m.optimizer.lr},
        {"momentum", m.optimizer.momentum},
        {"beta1", m.optimizer.beta1},
        {"beta2", m.optimizer.beta2},
        {"eps", m.optimizer.eps}}},
      {"allreduce", m.allreduce},
      {"global_batch", m.global_batch},
      {"data", {{"source", m.data_source}, {"cursor", m.data_cursor}}},
      {"rng", {{"algorithm", "splitmix64-counter"}, {"seed", m.seed}, {"position", m.data_cursor}}},
      {"num_params", m.num_params},
      {"tensors", m.tensors},
      {"shards", shards}};
}

// Every field checked (JsonReader): a manifest is bytes from the object store, and a torn or
// foreign one must come back as DataLoss naming the field, never as an exception.
Result<Manifest> FromJson(const Json& j) {
  JsonReader r(j, "manifest", StatusCode::kDataLoss);
  const std::string format = r.String("format");
  if (r.ok() && format != kFormat && format != kFormatV1) {
    r.Fail("format",
           "is '" + format + "', not " + std::string(kFormat) + " or " + std::string(kFormatV1));
  }
  const bool v1 = format == kFormatV1;
  Manifest m;
  m.job = r.String("job");
  m.id.epoch = r.Integer<int64_t>("epoch");
  m.id.step = r.Integer<int64_t>("step");
  m.world_size = r.Integer<int>("world_size");
  JsonReader mc = r.Object("model");
  m.model = ModelConfig{mc.Integer<int>("input_dim"), mc.Integer<int>("hidden"),
                        mc.Integer<int>("depth"), mc.Integer<int>("classes"),
                        mc.Bool("batchnorm")};
  JsonReader oc = r.Object("optimizer");
  const std::string kind_name = oc.String("kind");
  auto kind = ParseOptimizer(kind_name);
  if (!kind && oc.ok()) oc.Fail("kind", kind.error().message());
  m.optimizer = OptimizerConfig{kind.value_or(OptimizerKind::kSgd),
                                oc.Float("lr"),
                                oc.Float("momentum"),
                                oc.Float("beta1"),
                                oc.Float("beta2"),
                                oc.Float("eps")};
  m.allreduce = r.String("allreduce");
  m.global_batch = r.Integer<int>("global_batch");
  JsonReader data = r.Object("data");
  m.data_source = data.String("source");
  m.data_cursor = data.Integer<uint64_t>("cursor");
  m.seed = r.Object("rng").Integer<uint64_t>("seed");
  m.num_params = r.Integer<uint64_t>("num_params");
  m.tensors = r.Strings("tensors");
  for (JsonReader& s : r.Objects("shards")) {
    ShardEntry& e = m.shards.emplace_back();
    e.name = s.String("name");
    e.param_begin = s.Integer<uint64_t>("param_begin");
    e.param_end = s.Integer<uint64_t>("param_end");
    e.size = s.Integer<uint64_t>("size");
    if (v1) {
      e.checksum.sha256 = s.String("sha256");
      continue;
    }
    const std::string crc = s.String("crc32c");
    uint32_t value = 0;
    auto [end, ec] = std::from_chars(crc.data(), crc.data() + crc.size(), value, 16);
    if (s.ok() && (crc.size() != 8 || ec != std::errc() || end != crc.data() + crc.size())) {
      s.Fail("crc32c", "is '" + crc + "', not 8 hex digits");
    }
    e.checksum.crc32c = value;
  }
  if (!r.ok()) return std::unexpected(r.status());
  return m;
}

Status CheckTiling(const Manifest& m) {
  if (m.tensors.empty()) return ToStatus(DataLoss("manifest lists no tensors"));
  if (m.world_size < 1 || static_cast<size_t>(m.world_size) != m.shards.size()) {
    return ToStatus(DataLoss("manifest world_size does not match its shard list"));
  }
  uint64_t next = 0;
  for (size_t r = 0; r < m.shards.size(); ++r) {
    const ShardEntry& s = m.shards[r];
    if (s.name != ShardName(static_cast<int>(r), m.world_size)) {
      return ToStatus(DataLoss("manifest shard " + std::to_string(r) + " is named " + s.name));
    }
    // The size is compared without wrapping: a range of 2^62 parameters must not pass as 0 bytes.
    uint64_t bytes = 0;
    if (s.param_begin != next || s.param_end < s.param_begin ||
        __builtin_mul_overflow(s.param_end - s.param_begin, 4 * m.tensors.size(), &bytes) ||
        s.size != bytes) {
      return ToStatus(DataLoss("manifest shard " + s.name + " has an inconsistent range or size"));
    }
    next = s.param_end;
  }
  if (next != m.num_params) return ToStatus(DataLoss("manifest shards do not cover num_params"));
  return Status::Ok();
}

}  // namespace

std::string CkptDirName(const CkptId& id) {
  return "ckpt-" + std::to_string(id.epoch) + "-" + std::to_string(id.step);
}

std::optional<CkptId> ParseCkptDirName(std::string_view name) {
  if (!name.starts_with("ckpt-")) return std::nullopt;
  name.remove_prefix(5);
  const size_t dash = name.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  auto epoch = ParseNonNegative(name.substr(0, dash));
  auto step = ParseNonNegative(name.substr(dash + 1));
  if (!epoch || !step) return std::nullopt;
  return CkptId{*epoch, *step};
}

std::string ShardName(int rank, int world) {
  return "shard-" + std::to_string(rank) + "-of-" + std::to_string(world);
}

std::string CkptPrefix(std::string_view job, const CkptId& id) {
  return std::string(job) + "/" + CkptDirName(id) + "/";
}

Status ValidateJobName(std::string_view job) {
  if (job.empty() || job == "." || job == ".." || job.size() > 200) {
    return ToStatus(InvalidArgument("job id '" + std::string(job) +
                                    "' is not usable as a checkpoint directory name"));
  }
  for (unsigned char c : job) {
    if (c == '/' || c < 0x20 || c == 0x7f) {
      return ToStatus(InvalidArgument("job id '" + std::string(job) +
                                      "' must not contain '/' or control characters"));
    }
  }
  return Status::Ok();
}

std::vector<std::string> TensorNames(OptimizerKind kind) {
  if (kind == OptimizerKind::kSgd) return {"params", "momentum"};
  return {"params", "adam_m", "adam_v"};
}

std::string EncodeManifest(const Manifest& m) {
  Json j = ToJson(m);
  j["manifest_sha256"] = Sha256Hex(ToJson(m).dump());
  return j.dump(1) + "\n";
}

Result<Manifest> DecodeManifest(std::string_view bytes) {
  auto parsed = ParseJsonDocument(bytes, "manifest", StatusCode::kDataLoss);
  if (!parsed) return std::unexpected(parsed.error());
  Json& j = *parsed;
  JsonReader seal(j, "manifest", StatusCode::kDataLoss);
  const std::string recorded = seal.String("manifest_sha256");
  if (!seal.ok()) return std::unexpected(seal.status());
  j.erase("manifest_sha256");
  if (Sha256Hex(j.dump()) != recorded) return DataLoss("manifest checksum does not match");
  auto m = FromJson(j);
  if (!m) return m;
  if (Status s = CheckTiling(*m); !s.ok()) return std::unexpected(s);
  return m;
}

std::string EncodeShard(std::span<const std::span<const float>> tensors) {
  std::string out;
  size_t total = 0;
  for (auto t : tensors) total += t.size_bytes();
  // One allocation (growing by doubling copied the shard up to twice more), on huge pages: in
  // fresh memory the page faults cost more than the copy (common/big_buffer.h).
  ReserveBig(out, total);
  for (auto t : tensors) {
    PODSCHED_CHECK(t.size() == tensors[0].size());
    out.append(reinterpret_cast<const char*>(t.data()), t.size_bytes());
  }
  return out;
}

std::vector<RangeRead> PlanTensorRead(const Manifest& m, int tensor, size_t begin, size_t end) {
  PODSCHED_CHECK(tensor >= 0 && static_cast<size_t>(tensor) < m.tensors.size());
  PODSCHED_CHECK(begin <= end && end <= m.num_params);
  std::vector<RangeRead> reads;
  for (const ShardEntry& s : m.shards) {
    const uint64_t lo = std::max<uint64_t>(begin, s.param_begin);
    const uint64_t hi = std::min<uint64_t>(end, s.param_end);
    if (lo >= hi) continue;
    const uint64_t len = s.param_end - s.param_begin;
    reads.push_back(RangeRead{s.name, (tensor * len + (lo - s.param_begin)) * 4, (hi - lo) * 4,
                              static_cast<size_t>(lo - begin)});
  }
  return reads;
}

std::vector<CkptDirListing> GroupCheckpoints(std::span<const store::ObjectInfo> objects,
                                             std::string_view job) {
  const std::string prefix = std::string(job) + "/";
  std::vector<CkptDirListing> dirs;
  for (const store::ObjectInfo& o : objects) {
    if (!o.key.starts_with(prefix)) continue;
    const std::string_view rest = std::string_view(o.key).substr(prefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos) continue;
    const auto id = ParseCkptDirName(rest.substr(0, slash));
    if (!id) continue;
    auto it = std::find_if(dirs.begin(), dirs.end(), [&](auto& d) { return d.id == *id; });
    if (it == dirs.end()) it = dirs.insert(dirs.end(), CkptDirListing{*id, false, {}});
    it->keys.push_back(o.key);
    if (rest.substr(slash + 1) == "manifest") it->has_manifest = true;
  }
  std::sort(dirs.begin(), dirs.end(), [](auto& a, auto& b) { return a.id > b.id; });
  return dirs;
}

std::vector<CkptDirListing> SelectGarbage(const std::vector<CkptDirListing>& dirs, int keep) {
  int committed = 0;
  for (size_t i = 0; i < dirs.size(); ++i) {
    if (dirs[i].has_manifest && ++committed == keep) {
      return std::vector<CkptDirListing>(dirs.begin() + i + 1, dirs.end());
    }
  }
  return {};
}

}  // namespace podsched::train
