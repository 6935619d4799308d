#include "worker/train/mpi_trainer.h"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "common/clock.h"
#include "worker/train/async_saver.h"
#include "worker/train/checkpoint_store.h"
#include "worker/train/dataset_io.h"
#include "worker/train/exit_codes.h"
#include "worker/train/progress_sink.h"
#include "worker/train/ring_reduce_mpi.h"

namespace podsched::train {

volatile std::sig_atomic_t g_sigterm = 0;

namespace {

class MpiReducer final : public Reducer {
 public:
  void SumInt64(std::span<int64_t> v) override {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
  }
  void SumFloat(std::span<float> v) override {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  }
};

// What each rank tells rank 0 about its shard before a commit.
struct ShardReport {
  int32_t ok = 0;
  uint64_t size = 0;
  uint32_t crc32c = 0;  // ShardChecksum (a shard is always written with CRC-32C)
};

// A code every rank returns; thrown out of the step loop so all ranks unwind the same way.
struct ExitWith {
  int code;
};

class Trainer {
 public:
  explicit Trainer(const TrainOptions& o) : o_(o), layout_(o.model) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &world_);
    shard_ = ShardOf(layout_.size(), world_, rank_);
    padded_ = PaddedSize(layout_.size(), world_);
  }
  int Run();

 private:
  void Log(const std::string& line) const {
    if (rank_ != 0) return;
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  void LoadData();
  void Setup();
  void InitState();
  std::vector<std::span<float>> StateTensors() {
    std::vector<std::span<float>> state{state0_};
    if (o_.optimizer.kind == OptimizerKind::kAdam) state.push_back(state1_);
    return state;
  }
  std::optional<Manifest> ChooseCheckpoint();
  void Restore();
  void Step(GradAccumulator& acc, MpiReducer& reducer, LossStats& loss);
  void StepBoundary(bool before_first_step = false);
  void StartSave(bool async);
  bool CommitInFlight();
  void CommitOrExit() {
    if (!CommitInFlight()) throw ExitWith{kExitStorage};
  }
  void ReportProgress(const LossStats& loss, double seconds, int64_t steps_in_interval);
  int BcastCode(int code) const {
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return code;
  }

  TrainOptions o_;
  ParamLayout layout_;
  int rank_ = 0, world_ = 1;
  ShardRange shard_;
  VerifiedShards verified_;  // this rank's shards of the chosen checkpoint, until Restore reads them
  size_t padded_ = 0;
  std::vector<float> params_, state0_, state1_;
  std::vector<int64_t> fixed_scratch_;  // RingReduceScatter's receive buffers, kept across steps
  std::vector<float> float_scratch_;
  int64_t step_ = 0;
  uint64_t cursor_ = 0;
  Dataset train_, eval_;
  std::unique_ptr<ExampleStream> stream_;
  std::unique_ptr<store::ObjectStore> store_;
  AsyncSaver saver_;
  Manifest pending_;  // metadata of the save in flight
  std::string last_committed_;
  // Bytes of the last committed (or restored) checkpoint's shards, as rank 0 knows them: what the
  // scheduler bills when the checkpoint crosses zones (progress scalar checkpoint_bytes).
  uint64_t checkpoint_bytes_ = 0;
  UdpProgressSink sink_;
};

// Every rank loads the whole (small) data set; a failure anywhere ends the run on all ranks.
void Trainer::LoadData() {
  if (o_.data_url.empty()) {
    const DataSpec spec{o_.seed, o_.model.input_dim, o_.model.classes, 32};
    train_ = GenerateExamples(spec, 0, o_.train_examples);
    eval_ = GenerateExamples(spec, o_.train_examples, o_.eval_examples);
    return;
  }
  int code = kExitOk;
  std::string error;
  auto data_store = store::OpenObjectStore(o_.data_url);
  Result<StoredData> data = data_store ? ReadDataset(**data_store)
                                       : Result<StoredData>(std::unexpected(data_store.error()));
  if (!data) {
    error = data.error().ToString();
    code = data.error().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitStorage;
  } else if (data->train.input_dim != o_.model.input_dim ||
             data->train.classes != o_.model.classes) {
    error = "data set " + o_.data_url + " has input_dim " + std::to_string(data->train.input_dim) +
            " and classes " + std::to_string(data->train.classes) +
            "; pass the same --input-dim and --classes";
    code = kExitUsage;
  }
  if (!error.empty()) std::fprintf(stderr, "podtrain: rank %d: %s\n", rank_, error.c_str());
  MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (code != kExitOk) throw ExitWith{code};
  train_ = std::move(data->train);
  eval_ = std::move(data->eval);
}

// The initial parameters and zeroed optimizer state (what step 0 starts from).
void Trainer::InitState() {
  params_ = InitParams(o_.model, o_.seed);
  state0_.assign(shard_.size(), 0.0f);
  state1_.assign(o_.optimizer.kind == OptimizerKind::kAdam ? shard_.size() : 0, 0.0f);
}

void Trainer::Setup() {
  LoadData();
  stream_ = std::make_unique<ExampleStream>(o_.seed, train_.size());
  InitState();
  if (!o_.checkpoint_url.empty()) {
    auto s = store::OpenObjectStore(o_.checkpoint_url);
    if (!s) {
      if (rank_ == 0) std::fprintf(stderr, "podtrain: %s\n", s.error().ToString().c_str());
      throw ExitWith{kExitUsage};
    }
    store_ = std::move(*s);
  }
  if (rank_ == 0 && !o_.progress_endpoint.empty()) {
    if (Status s = sink_.Open(o_.progress_endpoint, o_.progress_key); !s.ok()) {
      std::fprintf(stderr, "podtrain: progress endpoint disabled: %s\n", s.ToString().c_str());
    }
  }
}

// Rank 0 lists the committed manifests, newest first, and offers them one by one; all ranks
// verify the candidate's shards together (rank r checks shards r, r+W, ...) and agree with one
// all-reduce, so verification reads each shard once in total, spread over the ranks.
std::optional<Manifest> Trainer::ChooseCheckpoint() {
  std::vector<std::string> candidates;  // encoded manifests (rank 0)
  int code = kExitOk;
  if (rank_ == 0) {
    std::vector<std::string> rejected;
    auto listed = ListCommittedManifests(*store_, o_.job, &rejected);
    for (const std::string& r : rejected)
      std::fprintf(stderr, "podtrain: rejected %s\n", r.c_str());
    if (!listed) {
      std::fprintf(stderr, "podtrain: %s\n", listed.error().ToString().c_str());
      code = kExitStorage;
    } else {
      for (const Manifest& m : *listed) candidates.push_back(EncodeManifest(m));
    }
  }
  if (BcastCode(code) != kExitOk) throw ExitWith{code};
  uint64_t count = candidates.size();
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  for (uint64_t i = 0; i < count; ++i) {
    std::string bytes = rank_ == 0 ? candidates[i] : std::string();
    uint64_t len = bytes.size();
    MPI_Bcast(&len, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    bytes.resize(len);
    MPI_Bcast(bytes.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD);
    Manifest m = *DecodeManifest(bytes);  // rank 0 decoded it already
    // This rank's own shard (at the same world size) is verified as it is read into the
    // buffers Setup made; a candidate that fails leaves them partly written (InitState below).
    VerifiedShards mine;
    const std::vector<std::span<float>> state = StateTensors();
    const RankBuffers into{shard_, params_, state};
    const Status s = VerifyCheckpointShards(*store_, m, rank_, world_, &mine, &into);
    // 0: my shards verify; 1: incomplete or corrupt; 2: the store failed.
    int verdict = s.ok()                                                                     ? 0
                  : (s.code() == StatusCode::kNotFound || s.code() == StatusCode::kDataLoss) ? 1
                                                                                             : 2;
    if (!s.ok()) {
      std::fprintf(stderr, "podtrain: rank %d: rejected %s: %s\n", rank_, CkptDirName(m.id).c_str(),
                   s.ToString().c_str());
    }
    MPI_Allreduce(MPI_IN_PLACE, &verdict, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (verdict == 2) throw ExitWith{kExitStorage};
    if (verdict == 0) {
      verified_ = std::move(mine);  // Restore reads these shards from memory, not again
      return m;
    }
  }
  if (count > 0) InitState();  // a rejected candidate may have been read into the buffers
  return std::nullopt;
}

uint64_t ShardBytes(const Manifest& m) {
  uint64_t bytes = 0;
  for (const ShardEntry& shard : m.shards) bytes += shard.size;
  return bytes;
}

void Trainer::Restore() {
  if (!store_) return;
  const std::optional<Manifest> chosen = ChooseCheckpoint();
  if (!chosen) {
    Log("restore: no checkpoint of job " + o_.job + "; starting at step 0");
    return;
  }
  const Manifest& m = *chosen;
  if (!(m.model == o_.model) || m.optimizer.kind != o_.optimizer.kind || m.seed != o_.seed ||
      m.num_params != layout_.size() || m.tensors != TensorNames(o_.optimizer.kind)) {
    if (rank_ == 0) {
      std::fprintf(stderr,
                   "podtrain: checkpoint %s was written with another model shape, optimizer or "
                   "seed than these flags; use the same flags to resume\n",
                   CkptDirName(m.id).c_str());
    }
    throw ExitWith{kExitUsage};
  }
  // Every rank reads all parameters, but only its own shard of the optimizer state, into the
  // buffers Setup made (the tensors are TensorNames(kind), checked above); the shards it
  // verified come from memory.
  const std::vector<std::span<float>> state = StateTensors();
  const Status read = ReadRankState(*store_, m, RankBuffers{shard_, params_, state}, &verified_);
  verified_ = {};
  int ok = read.ok(), all_ok = 0;
  if (!ok) {
    std::fprintf(stderr, "podtrain: rank %d: reading checkpoint: %s\n", rank_,
                 read.ToString().c_str());
  }
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) throw ExitWith{kExitStorage};
  step_ = m.id.step;
  cursor_ = m.data_cursor;
  last_committed_ = CkptDirName(m.id);
  checkpoint_bytes_ = ShardBytes(m);
  Log("restore: " + last_committed_ + " (world " + std::to_string(m.world_size) + " -> " +
      std::to_string(world_) + ")");
}

void Trainer::Step(GradAccumulator& acc, MpiReducer& reducer, LossStats& loss) {
  const Dataset local = LocalBatch(train_, *stream_, cursor_, o_.global_batch, world_, rank_);
  acc.Clear();
  auto r = ForwardBackward(o_.model, layout_, params_, local, o_.global_batch, reducer, acc);
  if (!r) {
    std::fprintf(stderr, "podtrain: rank %d: %s\n", rank_, r.error().ToString().c_str());
    MPI_Abort(MPI_COMM_WORLD, kExitOverflow);
  }
  loss.loss_sum += r->loss_sum;
  loss.correct += r->correct;
  const int block = static_cast<int>(padded_ / world_);
  std::vector<float> grad(block);
  // The reduction leaves partial sums in the accumulator's other blocks; Clear() resets them.
  if (acc.mode() == ReduceMode::kExact) {
    const std::span<const int64_t> sum =
        RingReduceScatter(acc.fixed(), fixed_scratch_, MPI_COMM_WORLD);
    for (int k = 0; k < block; ++k) {
      grad[k] = static_cast<float>(Dequantize(sum[k]) / o_.global_batch);
    }
  } else {
    const std::span<const float> sum =
        RingReduceScatter(acc.floats(), float_scratch_, MPI_COMM_WORLD);
    for (int k = 0; k < block; ++k) grad[k] = sum[k] / static_cast<float>(o_.global_batch);
  }
  ++step_;
  std::span<float> mine = std::span<float>(params_).subspan(shard_.begin, shard_.size());
  UpdateShard(o_.optimizer, step_, std::span<const float>(grad).first(shard_.size()), mine, state0_,
              state1_);
  std::vector<float> send(block, 0.0f), all(padded_);
  std::copy(mine.begin(), mine.end(), send.begin());
  MPI_Allgather(send.data(), block, MPI_FLOAT, all.data(), block, MPI_FLOAT, MPI_COMM_WORLD);
  std::copy_n(all.begin(), layout_.size(), params_.begin());
  cursor_ += o_.global_batch;
}

void Trainer::StartSave(bool async) {
  pending_ = Manifest{};
  pending_.job = o_.job;
  pending_.id = CkptId{o_.epoch, step_};
  pending_.world_size = world_;
  pending_.model = o_.model;
  pending_.optimizer = o_.optimizer;
  pending_.allreduce = std::string(ReduceModeName(o_.allreduce));
  pending_.global_batch = o_.global_batch;
  pending_.seed = o_.seed;
  pending_.data_cursor = cursor_;
  pending_.data_source = o_.data_url.empty() ? "generated" : o_.data_url;
  pending_.num_params = layout_.size();
  pending_.tensors = TensorNames(o_.optimizer.kind);
  std::vector<std::span<const float>> parts{
      std::span<const float>(params_).subspan(shard_.begin, shard_.size()), state0_};
  if (o_.optimizer.kind == OptimizerKind::kAdam) parts.push_back(state1_);
  saver_.Start(store_.get(), CkptPrefix(o_.job, pending_.id) + ShardName(rank_, world_),
               EncodeShard(parts), o_.write_delay_ms);
  if (!async) CommitOrExit();
}

// Collective: waits for this rank's shard, gathers every rank's report, rank 0 commits the
// manifest (or not) and tells everyone. Returns whether it committed; a fenced commit ends the
// run. A failed periodic save is only logged: training goes on and the next save may succeed.
bool Trainer::CommitInFlight() {
  auto shard = saver_.Wait();
  ShardReport mine;
  if (shard) {
    mine.ok = 1;
    mine.size = shard->size;
    mine.crc32c = *shard->checksum.crc32c;
  } else {
    std::fprintf(stderr, "podtrain: rank %d: %s\n", rank_, shard.error().ToString().c_str());
  }
  std::vector<ShardReport> reports(rank_ == 0 ? world_ : 0);
  MPI_Gather(&mine, sizeof mine, MPI_BYTE, reports.data(), sizeof mine, MPI_BYTE, 0,
             MPI_COMM_WORLD);
  int code = kExitOk;
  if (rank_ == 0) {
    for (int r = 0; r < world_ && code == kExitOk; ++r) {
      if (!reports[r].ok) code = kExitStorage;
      const ShardRange range = ShardOf(layout_.size(), world_, r);
      pending_.shards.push_back(
          ShardEntry{ShardName(r, world_), range.begin, range.end, reports[r].size,
                     ShardChecksum{.crc32c = reports[r].crc32c, .sha256 = {}}});
    }
    if (code == kExitOk) {
      // Fault-injection tests widen the window in which the shards exist without a manifest.
      if (o_.manifest_delay_ms > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(o_.manifest_delay_ms));
      }
      const Status s = CommitManifest(*store_, pending_);
      if (!s.ok()) {
        std::fprintf(stderr, "podtrain: %s\n", s.ToString().c_str());
        code = s.code() == StatusCode::kFailedPrecondition ? kExitFenced : kExitStorage;
      }
    }
    if (code == kExitOk) {
      if (auto gc = CollectGarbage(*store_, o_.job, o_.keep); !gc) {
        std::fprintf(stderr, "podtrain: garbage collection: %s\n", gc.error().ToString().c_str());
      }
    }
  }
  code = BcastCode(code);
  const std::string name = CkptDirName(pending_.id);
  if (code == kExitFenced) throw ExitWith{kExitFenced};
  if (code != kExitOk) {
    Log("checkpoint " + name + " not committed (see stderr)");
    return false;
  }
  last_committed_ = name;
  if (rank_ == 0) checkpoint_bytes_ = ShardBytes(pending_);
  Log("checkpoint committed " + name);
  return true;
}

void Trainer::StepBoundary(bool before_first_step) {
  // [SIGTERM seen anywhere, a shard still being written anywhere]
  int64_t flags[2] = {g_sigterm ? 1 : 0, saver_.busy() ? 1 : 0};
  MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (saver_.in_flight() && flags[1] == 0) (void)CommitInFlight();
  if (flags[0]) {
    if (!store_) {
      Log("preempted at step " + std::to_string(step_) + " without a checkpoint URL");
      throw ExitWith{kExitPreemptedNoCkpt};
    }
    if (saver_.in_flight()) (void)CommitInFlight();
    if (last_committed_ != CkptDirName({o_.epoch, step_})) StartSave(/*async=*/false);
    Log("preempted at step " + std::to_string(step_) + "; checkpoint " + last_committed_);
    throw ExitWith{kExitPreempted};
  }
  if (store_ && !before_first_step && o_.checkpoint_every > 0 && step_ % o_.checkpoint_every == 0 &&
      step_ < o_.steps) {
    if (saver_.in_flight()) (void)CommitInFlight();  // at most one save in flight
    StartSave(/*async=*/true);
  }
}

void Trainer::ReportProgress(const LossStats& loss, double seconds, int64_t steps_in_interval) {
  double sums[2] = {loss.loss_sum, static_cast<double>(loss.correct)};
  MPI_Reduce(rank_ == 0 ? MPI_IN_PLACE : sums, sums, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank_ != 0) return;
  progress::Progress p;
  p.job = o_.job;
  p.epoch = o_.epoch;
  p.step = step_;
  p.steps = o_.steps;
  p.loss = sums[0] / (static_cast<double>(o_.global_batch) * steps_in_interval);
  p.accuracy = Evaluate(o_.model, params_, eval_).accuracy;
  p.examples_per_s = seconds > 0 ? o_.global_batch * steps_in_interval / seconds : 0;
  p.checkpoint = last_committed_;
  if (checkpoint_bytes_ > 0) p.scalars["checkpoint_bytes"] = static_cast<double>(checkpoint_bytes_);
  Log(progress::ProgressLine(p));
  sink_.Send(p);
}

int Trainer::Run() {
  if (Status s = CheckWorldSize(o_, world_); !s.ok()) {
    if (rank_ == 0) std::fprintf(stderr, "podtrain: %s\n", s.message().c_str());
    return kExitUsage;
  }
  try {
    Setup();
    Restore();
    MpiReducer reducer;
    GradAccumulator acc(o_.allreduce, padded_, o_.global_batch);
    const RealClock clock;
    LossStats interval;
    int64_t interval_steps = 0;
    TimePoint interval_start = clock.Now();
    double step_seconds = 0;
    const int64_t first_step = step_;
    StepBoundary(
        /*before_first_step=*/true);  // a SIGTERM during restore is honoured before the first step
    while (step_ < o_.steps) {
      const TimePoint start = clock.Now();
      Step(acc, reducer, interval);
      ++interval_steps;
      if (o_.min_step_ms > 0) {
        std::this_thread::sleep_until(std::chrono::system_clock::time_point(start) +
                                      std::chrono::milliseconds(o_.min_step_ms));
      }
      if (step_ % o_.progress_every == 0 || step_ == o_.steps) {
        ReportProgress(interval, ToSeconds(clock.Now() - interval_start), interval_steps);
        interval = LossStats{};
        interval_steps = 0;
        interval_start = clock.Now();
      }
      StepBoundary();
      // Whole iterations, so the summary includes what checkpointing costs at step boundaries.
      step_seconds += ToSeconds(clock.Now() - start);
    }
    if (saver_.in_flight()) (void)CommitInFlight();
    if (store_ && last_committed_ != CkptDirName({o_.epoch, step_})) StartSave(/*async=*/false);
    if (step_ > first_step) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "summary steps=%lld mean_step_ms=%.3f",
                    static_cast<long long>(step_ - first_step),
                    1000.0 * step_seconds / (step_ - first_step));
      Log(buf);
    }
    Log("params_sha256=" + Sha256Hex(std::string_view(reinterpret_cast<const char*>(params_.data()),
                                                      params_.size() * sizeof(float))));
    return kExitOk;
  } catch (const ExitWith& e) {
    if (saver_.in_flight()) (void)saver_.Wait();
    return e.code;
  }
}

}  // namespace

int RunTrainer(const TrainOptions& options) {
  if (!options.pid_dir.empty()) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::ofstream(options.pid_dir + "/rank-" + std::to_string(rank) + ".pid") << getpid() << "\n";
  }
  Trainer trainer(options);
  return trainer.Run();
}

}  // namespace podsched::train
