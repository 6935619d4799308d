// podtrain: the reference MPI training job (docs/podtrain.md).
#include <mpi.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

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

int Main(int argc, char** argv) {
  auto cmd = ParseCommandLine(argc, argv, GetEnv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!cmd) {
    if (rank == 0) std::fprintf(stderr, "podtrain: %s\n(run podtrain --help)\n", cmd.error().message().c_str());
    return kExitUsage;
  }
  switch (cmd->kind) {
    case Command::Kind::kHelp:
      if (rank == 0) std::printf("%s", cmd->help.c_str());
      return kExitOk;
    case Command::Kind::kGenData:
      if (rank == 0) std::fprintf(stderr, "podtrain gen-data: TFRecord output needs store/formats, which is not built yet\n");
      return kExitUsage;
    case Command::Kind::kTrain:
      if (!cmd->train.data_url.empty()) {
        if (rank == 0) std::fprintf(stderr, "podtrain: --data needs store/formats (TFRecord), which is not built yet\n");
        return kExitUsage;
      }
      return RunTrainer(cmd->train);
  }
  return kExitError;
}

}  // namespace

int main(int argc, char** argv) {
  InstallSigterm();  // before MPI_Init: a SIGTERM that early still means "checkpoint and exit"
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "podtrain: MPI_Init_thread failed\n");
    return kExitError;
  }
  InstallSigterm();  // in case the MPI runtime replaced the handler
  const int code = Main(argc, argv);
  MPI_Finalize();
  return code;
}
