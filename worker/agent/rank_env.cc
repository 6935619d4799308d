#include "worker/agent/rank_env.h"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace podsched::agent {
namespace {

Result<int> IntVar(const EnvLookup& env, const std::string& name) {
  std::optional<std::string> v = env(name);
  if (!v) return InvalidArgument(name + " is not set");
  int out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size() || out < 0) {
    return InvalidArgument(name + "='" + v->substr(0, 32) + "' is not a non-negative integer");
  }
  return out;
}

Status Check(const RankIdentity& id) {
  if (id.world_size < 1 || id.local_world_size < 1 || id.rank >= id.world_size ||
      id.local_rank >= id.local_world_size || id.world_size % id.local_world_size != 0) {
    return Status(StatusCode::kInvalidArgument, "rank " + std::to_string(id.rank) + " (local " +
                           std::to_string(id.local_rank) + ") does not fit world size " +
                           std::to_string(id.world_size) + " with " +
                           std::to_string(id.local_world_size) + " ranks per host");
  }
  return Status::Ok();
}

// The first error of `fields`, else `id` checked.
Result<RankIdentity> Assemble(RankIdentity id, std::initializer_list<Result<int>> fields) {
  for (const Result<int>& f : fields) {
    if (!f) return std::unexpected(f.error());
  }
  Status s = Check(id);
  if (!s.ok()) return std::unexpected(s);
  return id;
}

}  // namespace

Result<RankIdentity> RankFromMpi(const EnvLookup& env) {
  Result<int> rank = IntVar(env, "OMPI_COMM_WORLD_RANK"), size = IntVar(env, "OMPI_COMM_WORLD_SIZE"),
              local = IntVar(env, "OMPI_COMM_WORLD_LOCAL_RANK"),
              local_size = IntVar(env, "OMPI_COMM_WORLD_LOCAL_SIZE");
  RankIdentity id;
  id.rank = rank.value_or(0);
  id.world_size = size.value_or(0);
  id.local_rank = local.value_or(0);
  id.local_world_size = local_size.value_or(0);
  if (id.local_world_size > 0) id.node_rank = id.rank / id.local_world_size;
  return Assemble(id, {rank, size, local, local_size});
}

Result<RankIdentity> RankFromIndex(int rank, const EnvLookup& env) {
  Result<int> size = IntVar(env, "WORLD_SIZE"), local_size = IntVar(env, "LOCAL_WORLD_SIZE");
  RankIdentity id;
  id.rank = rank;
  id.world_size = size.value_or(0);
  id.local_world_size = local_size.value_or(0);
  if (id.local_world_size > 0) {
    id.node_rank = rank / id.local_world_size;
    id.local_rank = rank % id.local_world_size;
  }
  return Assemble(id, {Result<int>(rank), size, local_size});
}

std::map<std::string, std::string> RankEnv(const RankIdentity& id, const EnvLookup& env) {
  std::map<std::string, std::string> out;
  out["RANK"] = std::to_string(id.rank);
  out["LOCAL_RANK"] = std::to_string(id.local_rank);
  out["NODE_RANK"] = std::to_string(id.node_rank);
  out["JAX_PROCESS_ID"] = std::to_string(id.rank);
  if (std::optional<std::string> addrs = env("POD_RANK_ADDRS")) {
    std::vector<std::string> workers;
    for (std::string_view w : SplitOn(*addrs, ',')) workers.emplace_back(w);
    if (static_cast<int>(workers.size()) == id.world_size) {
      nlohmann::json tf = {{"cluster", {{"worker", workers}}},
                           {"task", {{"type", "worker"}, {"index", id.rank}}}};
      out["TF_CONFIG"] = tf.dump();
    }
  }
  if (std::optional<std::string> tag = env("PODWORKER_TAG")) {
    out["PODWORKER_TAG"] = *tag + ":" + std::to_string(id.rank);
  }
  // A multislice job's slices hold equally many hosts, one slice after the other in rank order.
  if (env("POD_NUM_SLICES")) {
    const Result<int> slices = IntVar(env, "POD_NUM_SLICES");
    const int hosts = id.world_size / std::max(1, id.local_world_size);
    if (slices && *slices > 0 && hosts % *slices == 0) {
      const std::string slice = std::to_string(id.node_rank / (hosts / *slices));
      out["POD_SLICE_ID"] = slice;
      if (env("MEGASCALE_NUM_SLICES")) out["MEGASCALE_SLICE_ID"] = slice;
    }
  }
  return out;
}

}  // namespace podsched::agent
