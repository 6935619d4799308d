#include "worker/train/flags.h"

#include <CLI/CLI.hpp>

#include "worker/train/checkpoint.h"

namespace podsched::train {
namespace {

void AddTrainFlags(CLI::App& app, TrainOptions& o, std::string& allreduce, std::string& optimizer,
                   std::string& batchnorm, std::optional<int64_t>& epoch,
                   std::optional<std::string>& job, std::optional<std::string>& url) {
  app.add_option("--steps", o.steps, "Total optimizer steps to reach")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--global-batch", o.global_batch, "Examples per step over all ranks")
      ->check(CLI::PositiveNumber);
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "Asynchronous checkpoint every N steps (0: only on SIGTERM and at the end)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint-url", url, "Object store URL (default: $POD_CHECKPOINT_URL)");
  app.add_option("--keep", o.keep, "Checkpoints to keep")->check(CLI::PositiveNumber);
  app.add_option("--seed", o.seed, "Seed of data, teacher, initialisation and shuffles");
  app.add_option("--allreduce", allreduce, "exact (fixed-point int64) or float")
      ->check(CLI::IsMember({"exact", "float"}));
  app.add_option("--optimizer", optimizer, "adam or sgd (momentum)")
      ->check(CLI::IsMember({"adam", "sgd"}));
  app.add_option("--lr", o.optimizer.lr, "Learning rate")->check(CLI::PositiveNumber);
  app.add_option("--momentum", o.optimizer.momentum, "SGD momentum")->check(CLI::Range(0.0, 1.0));
  app.add_option("--batchnorm", batchnorm, "none or sync (cross-replica batch norm)")
      ->check(CLI::IsMember({"none", "sync"}));
  app.add_option("--input-dim", o.model.input_dim, "Input features");
  app.add_option("--hidden", o.model.hidden, "Units per hidden layer");
  app.add_option("--depth", o.model.depth, "Hidden layers");
  app.add_option("--classes", o.model.classes, "Classes");
  app.add_option("--data", o.data_url, "Train from TFRecord shards written by gen-data");
  app.add_option("--train-examples", o.train_examples, "Generated training examples")
      ->check(CLI::PositiveNumber);
  app.add_option("--eval-examples", o.eval_examples, "Generated held-out examples")
      ->check(CLI::PositiveNumber);
  app.add_option("--progress-every", o.progress_every, "Report progress every N steps")
      ->check(CLI::PositiveNumber);
  app.add_option("--job", job, "Job id (default: $POD_JOB_ID, else 'standalone')");
  app.add_option("--epoch", epoch, "Placement epoch (default: $POD_EPOCH, else 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--pid-dir", o.pid_dir, "Each rank writes rank-R.pid into this directory");
  app.add_option("--min-step-ms", o.min_step_ms, "Pad every step to at least this many ms")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--write-delay-ms", o.write_delay_ms,
                 "Testing: sleep this long after each 1 MiB of shard written")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--manifest-delay-ms", o.manifest_delay_ms,
                 "Testing: rank 0 sleeps this long after all shards are stored, before the manifest")
      ->check(CLI::NonNegativeNumber);
}

Result<int64_t> ParseEpoch(const std::string& text) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  return InvalidArgument("POD_EPOCH='" + text + "' is not a non-negative integer");
}

Status FinishTrain(TrainOptions& o, const std::string& allreduce, const std::string& optimizer,
                   const std::string& batchnorm, const std::optional<int64_t>& epoch,
                   const std::optional<std::string>& job, const std::optional<std::string>& url,
                   const EnvLookup& env) {
  o.allreduce = allreduce == "float" ? ReduceMode::kFloat : ReduceMode::kExact;
  o.optimizer.kind = *ParseOptimizer(optimizer);  // IsMember checked it
  o.model.batchnorm = batchnorm == "sync";
  if (Status s = ValidateModelConfig(o.model); !s.ok()) return s;
  if (job) {
    o.job = *job;
  } else if (auto e = env("POD_JOB_ID")) {
    o.job = *e;
  }
  if (Status s = ValidateJobName(o.job); !s.ok()) return s;
  if (epoch) {
    o.epoch = *epoch;
  } else if (auto e = env("POD_EPOCH")) {
    auto v = ParseEpoch(*e);
    if (!v) return v.error();
    o.epoch = *v;
  }
  if (url) {
    o.checkpoint_url = *url;
  } else if (auto e = env("POD_CHECKPOINT_URL")) {
    o.checkpoint_url = *e;
  }
  if (auto e = env("POD_PROGRESS_ENDPOINT")) o.progress_endpoint = *e;
  if (auto e = env("POD_PROGRESS_KEY")) o.progress_key = *e;
  return Status::Ok();
}

}  // namespace

std::string_view ReduceModeName(ReduceMode mode) {
  return mode == ReduceMode::kExact ? "exact" : "float";
}

Result<Command> ParseCommandLine(int argc, const char* const* argv, const EnvLookup& env) {
  CLI::App app("podtrain: data-parallel MLP training with exact all-reduce and checkpoints",
               "podtrain");
  Command cmd;
  std::string allreduce = "exact", optimizer = "adam", batchnorm = "none";
  std::optional<int64_t> epoch;
  std::optional<std::string> job, url;
  AddTrainFlags(app, cmd.train, allreduce, optimizer, batchnorm, epoch, job, url);

  CLI::App* gen = app.add_subcommand("gen-data", "Write the generated data set as TFRecord shards");
  GenDataOptions& g = cmd.gen;
  gen->add_option("--out", g.out_url, "Object store URL to write under")->required();
  gen->add_option("--examples", g.examples, "Training examples")->check(CLI::PositiveNumber);
  gen->add_option("--eval-examples", g.eval_examples, "Held-out examples")
      ->check(CLI::PositiveNumber);
  gen->add_option("--shards", g.shards, "Training shards")->check(CLI::PositiveNumber);
  gen->add_option("--seed", g.seed, "Seed");
  gen->add_option("--input-dim", g.input_dim, "Input features")->check(CLI::PositiveNumber);
  gen->add_option("--classes", g.classes, "Classes")->check(CLI::Range(2, 1 << 20));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    cmd.kind = Command::Kind::kHelp;
    cmd.help = app.help();
    return cmd;
  } catch (const CLI::CallForAllHelp&) {
    cmd.kind = Command::Kind::kHelp;
    cmd.help = app.help("", CLI::AppFormatMode::All);
    return cmd;
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(e.what());
  }
  if (*gen) {
    cmd.kind = Command::Kind::kGenData;
    return cmd;
  }
  if (Status s = FinishTrain(cmd.train, allreduce, optimizer, batchnorm, epoch, job, url, env);
      !s.ok()) {
    return std::unexpected(s);
  }
  return cmd;
}

Status CheckWorldSize(const TrainOptions& o, int world) {
  if (o.global_batch % world != 0) {
    return ToStatus(
        InvalidArgument("--global-batch " + std::to_string(o.global_batch) +
                        " is not divisible by the world size " + std::to_string(world) +
                        "; choose a global batch that is a multiple of the number of ranks"));
  }
  return Status::Ok();
}

}  // namespace podsched::train
