// podprobe: the smallest MPI program that honours the job contract (docs/jobspec.md, "The launch contract"), for
// tests of podworker and podsched. It all-reduces the ranks, prints, and exits; options make it
// run for a while, report progress, ignore SIGTERM or fail, so that every exit reason of the
// bus can be produced on purpose.
//
// SIGTERM (default): every rank sets a flag; each ~50 ms tick the ranks all-reduce it, so all of
// them agree, rank 0 prints "podprobe: preempted" and all exit 75 (podtrain's preempted code).
// --slow-stop-rank R --slow-stop-ms N: rank R then takes N ms more after MPI_Finalize (a rank still
// writing its part of a checkpoint when the others have exited 75) and writes DIR/rank-R.stopped.
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "worker/train/exit_codes.h"
#include "worker/train/progress_sink.h"

namespace {

volatile std::sig_atomic_t g_sigterm = 0;

void OnSigterm(int) { g_sigterm = 1; }

void Install(void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
}

void Ignore(int) {}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct Options {
  double run_seconds = 0;
  bool ignore_sigterm = false;
  int exit_code = 0;
  std::string pid_dir;
  int progress_every_ms = 0;
  int slow_stop_rank = -1;
  int slow_stop_ms = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"podprobe: MPI test program for podworker (all-reduce of the ranks, then exit)"};
  app.add_option("--run-seconds", o.run_seconds, "Keep running up to N s (SIGTERM ends it early)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--ignore-sigterm", o.ignore_sigterm, "Install a SIGTERM handler that does nothing");
  app.add_option("--exit-code", o.exit_code, "Rank 0 exits with this code at the end")
      ->check(CLI::Range(0, 255));
  app.add_option("--pid-dir", o.pid_dir, "Each rank writes DIR/rank-R.pid");
  app.add_option("--progress-every-ms", o.progress_every_ms,
                 "Rank 0 sends a progress datagram to POD_PROGRESS_ENDPOINT every N ms")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--slow-stop-rank", o.slow_stop_rank,
                 "When preempted, this rank takes --slow-stop-ms more after MPI_Finalize")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--slow-stop-ms", o.slow_stop_ms, "See --slow-stop-rank")
      ->check(CLI::NonNegativeNumber);
  // Before anything else (option parsing included): a SIGTERM that early still means "exit as
  // preempted", or nothing with --ignore-sigterm.
  bool ignore = false;
  for (int i = 1; i < argc; ++i) ignore = ignore || std::string(argv[i]) == "--ignore-sigterm";
  Install(ignore ? Ignore : OnSigterm);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  MPI_Init(&argc, &argv);
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);

  if (!o.pid_dir.empty()) {
    std::ofstream(o.pid_dir + "/rank-" + std::to_string(rank) + ".pid") << getpid() << "\n";
  }
  long long mine = rank, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  // Simulated hosts share one kernel hostname; podworker sets POD_HOST for the ranks it starts.
  std::string where = Env("POD_HOST");
  if (where.empty()) where = host;
  if (rank == 0) {
    std::printf("podprobe: world=%d sum=%lld job=%s epoch=%s hosts=%s\n", world, sum,
                Env("POD_JOB_ID").c_str(), Env("POD_EPOCH").c_str(), Env("POD_HOSTS").c_str());
  }
  std::printf("rank %d on host %s\n", rank, where.c_str());
  std::fflush(stdout);

  podsched::train::UdpProgressSink sink;
  const std::string endpoint = Env("POD_PROGRESS_ENDPOINT");
  if (rank == 0 && o.progress_every_ms > 0 && !endpoint.empty()) {
    if (auto s = sink.Open(endpoint, Env("POD_PROGRESS_KEY")); !s.ok()) std::fprintf(stderr, "podprobe: %s\n", s.ToString().c_str());
  }

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto next_progress = start;
  int64_t step = 0;
  bool preempted = false;
  // Every tick all ranks all-reduce [SIGTERM seen, rank 0's clock says time is up], so they
  // all leave the loop in the same iteration (ranks checking their own clocks could disagree
  // by one iteration and leave one rank alone in an all-reduce).
  while (o.run_seconds > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ++step;
    if (rank == 0 && o.progress_every_ms > 0 && Clock::now() >= next_progress) {
      podsched::progress::Progress p;
      p.job = Env("POD_JOB_ID");
      p.epoch = std::atoll(Env("POD_EPOCH").c_str());
      p.step = step;
      p.steps = static_cast<int64_t>(o.run_seconds * 20);
      p.loss = 1.0 / static_cast<double>(step);
      p.checkpoint = "ckpt-" + std::to_string(p.epoch) + "-" + std::to_string(step);
      sink.Send(p);
      next_progress = Clock::now() + std::chrono::milliseconds(o.progress_every_ms);
    }
    const bool time_up =
        rank == 0 && std::chrono::duration<double>(Clock::now() - start).count() >= o.run_seconds;
    int flags[2] = {g_sigterm ? 1 : 0, time_up ? 1 : 0}, any[2] = {0, 0};
    MPI_Allreduce(flags, any, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any[0]) {
      preempted = true;
      break;
    }
    if (any[1]) break;
  }
  if (preempted) {
    if (rank == 0) std::printf("podprobe: preempted\n");
    std::fflush(stdout);
    MPI_Finalize();
    if (rank == o.slow_stop_rank) {
      std::this_thread::sleep_for(std::chrono::milliseconds(o.slow_stop_ms));
      if (!o.pid_dir.empty()) {
        std::ofstream(o.pid_dir + "/rank-" + std::to_string(rank) + ".stopped") << "done\n";
      }
    }
    return podsched::train::kExitPreempted;
  }
  MPI_Finalize();
  return rank == 0 ? o.exit_code : 0;
}
