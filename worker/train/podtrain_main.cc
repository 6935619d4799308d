// podtrain: the reference MPI training job (docs/podtrain.md).
#include <mpi.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "store/objects/object_store.h"
#include "worker/train/dataset_io.h"
#include "worker/train/exit_codes.h"
#include "worker/train/flags.h"
#include "worker/train/mpi_trainer.h"

namespace {

using namespace podsched::train;

void OnSigterm(int) { g_sigterm = 1; }

void InstallSigterm() {
  struct sigaction sa {};
  sa.sa_handler = OnSigterm;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
}

std::optional<std::string> GetEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// `podtrain gen-data`: no MPI needed.
int GenData(const GenDataOptions& g) {
  auto store = podsched::store::OpenObjectStore(g.out_url);
  if (!store) {
    std::fprintf(stderr, "podtrain gen-data: %s\n", store.error().ToString().c_str());
    return kExitUsage;
  }
  const DataSpec spec{g.seed, g.input_dim, g.classes, 32};
  const StoredData data{GenerateExamples(spec, 0, g.examples),
                        GenerateExamples(spec, g.examples, g.eval_examples), g.seed};
  if (auto s = WriteDataset(**store, data, g.shards); !s.ok()) {
    std::fprintf(stderr, "podtrain gen-data: %s\n", s.ToString().c_str());
    return kExitStorage;
  }
  std::printf("wrote %llu training examples in %d shards and %llu held-out examples to %s\n",
              static_cast<unsigned long long>(g.examples), g.shards,
              static_cast<unsigned long long>(g.eval_examples), g.out_url.c_str());
  return kExitOk;
}

int Main(const podsched::Result<Command>& cmd) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!cmd) {
    if (rank == 0)
      std::fprintf(stderr, "podtrain: %s\n(run podtrain --help)\n", cmd.error().message().c_str());
    return kExitUsage;
  }
  switch (cmd->kind) {
    case Command::Kind::kHelp:
      if (rank == 0) std::printf("%s", cmd->help.c_str());
      return kExitOk;
    case Command::Kind::kGenData:
      return kExitError;  // handled before MPI_Init
    case Command::Kind::kTrain:
      return RunTrainer(cmd->train);
  }
  return kExitError;
}

}  // namespace

int main(int argc, char** argv) {
  const auto cmd = ParseCommandLine(argc, argv, GetEnv);
  if (cmd && cmd->kind == Command::Kind::kGenData) return GenData(cmd->gen);
  InstallSigterm();  // before MPI_Init: a SIGTERM that early still means "checkpoint and exit"
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "podtrain: MPI_Init_thread failed\n");
    return kExitError;
  }
  InstallSigterm();  // in case the MPI runtime replaced the handler
  const int code = Main(cmd);
  MPI_Finalize();
  return code;
}
