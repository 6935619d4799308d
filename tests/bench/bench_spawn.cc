// bench_spawn: what it costs to start the helpers a job runs, and podctl, which a user starts
// for every command (issue 29, stage 1); and what the agent itself pays to start a child
// (SpawnChild, against a plain fork + exec) while it has the shape of a running agent: 18 MiB
// written, six more threads waking every millisecond. Starts each
// command --runs times, one after another (posix_spawn + waitpid), and prints the wall time and
// the CPU time (user + system, from the children's rusage) per start, beside /bin/true's, the
// floor of process creation on this machine. The commands fail at once on purpose (a usage
// error), so what is measured is the program's start: the dynamic loader, the libraries'
// initialisers, main. (podctl is started as `podctl --help`: its parser and the help text.)
//
//   bench_spawn --podworker build/worker/agent/podworker
//               --helper build/worker/agent/podworker-helper
//               --rank build/worker/agent/podworker-rank
//               [--podctl build/scheduler/ctl/podctl] [--runs 300]
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "worker/agent/child.h"

extern char** environ;

namespace {

struct Cost {
  double wall_ms = 0;
  double cpu_ms = 0;
};

double CpuMs(const rusage& r) {
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
         (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}

// Mean cost of one start of `argv`, over `runs`; a failure to start it ends the benchmark.
Cost Measure(const std::vector<std::string>& argv, int runs) {
  if (access(argv[0].c_str(), X_OK) != 0) {
    std::fprintf(stderr, "bench_spawn: %s is not an executable file\n", argv[0].c_str());
    std::exit(1);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
  rusage before{};
  getrusage(RUSAGE_CHILDREN, &before);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) {
    pid_t pid = 0;
    if (posix_spawn(&pid, args[0], &quiet, nullptr, args.data(), environ) != 0) {
      std::fprintf(stderr, "bench_spawn: cannot start %s\n", args[0]);
      std::exit(1);
    }
    waitpid(pid, nullptr, 0);
  }
  const double wall = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  rusage after{};
  getrusage(RUSAGE_CHILDREN, &after);
  posix_spawn_file_actions_destroy(&quiet);
  return {wall / runs, (CpuMs(after) - CpuMs(before)) / runs};
}

// CPU of the calling thread (its copy-on-write faults after a fork are its own) and of the
// children it waited for, per start of /bin/true, the way `spawn` starts it, in a process with
// the shape of a running agent (podworker: 7 threads, ~18 MiB resident).
double AgentSpawnCpuMs(bool use_fork, int runs) {
  std::vector<char> heap(18 << 20);
  std::memset(heap.data(), 1, heap.size());
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&stop] {
      while (!stop) usleep(1000);
    });
  }
  char* const args[] = {const_cast<char*>("/bin/true"), nullptr};
  rusage self_before{}, children_before{};
  getrusage(RUSAGE_THREAD, &self_before);
  getrusage(RUSAGE_CHILDREN, &children_before);
  for (int i = 0; i < runs; ++i) {
    pid_t pid = -1;
    if (use_fork) {
      pid = fork();
      if (pid == 0) {
        execve(args[0], args, environ);
        _exit(127);
      }
    } else {
      auto child = podsched::agent::SpawnChild({"/bin/true"}, {"PATH=/bin"}, nullptr, "",
                                               podsched::agent::ChildOutput::kDiscard);
      pid = child ? child->pid : -1;
    }
    if (pid < 0) {
      std::fprintf(stderr, "bench_spawn: cannot start /bin/true\n");
      std::exit(1);
    }
    // The agent goes on with its work meanwhile: it writes some of its memory.
    for (size_t k = 0; k < 64; ++k) heap[(k * 13 * 4096 + static_cast<size_t>(i)) % heap.size()]++;
    waitpid(pid, nullptr, 0);
  }
  rusage self_after{}, children_after{};
  getrusage(RUSAGE_THREAD, &self_after);
  getrusage(RUSAGE_CHILDREN, &children_after);
  stop = true;
  for (std::thread& t : threads) t.join();
  return (CpuMs(self_after) - CpuMs(self_before) + CpuMs(children_after) - CpuMs(children_before)) /
         runs;
}

void Figure(const std::string& name, double value, const char* unit) {
  std::printf("FIGURE %s %.3f %s\n", name.c_str(), value, unit);
}

}  // namespace

int main(int argc, char** argv) {
  std::string podworker, helper, rank_binary, podctl;
  int runs = 300;
  CLI::App app{"bench_spawn: the start cost of podworker's helpers against /bin/true"};
  app.add_option("--podworker", podworker, "the agent's binary")->required();
  app.add_option("--helper", helper, "podworker-helper")->required();
  app.add_option("--rank", rank_binary, "podworker-rank")->required();
  app.add_option("--podctl", podctl, "the CLI (optional)");
  app.add_option("--runs", runs, "starts of each command")->check(CLI::Range(10, 100000));
  CLI11_PARSE(app, argc, argv);

  const Cost floor = Measure({"/bin/true"}, runs);
  // `rank` without a command: a usage error right after the start, in both binaries.
  const Cost agent = Measure({podworker, "rank"}, runs);
  const Cost small = Measure({helper, "rank"}, runs);
  const Cost lean = Measure({rank_binary, "rank"}, runs);
  std::printf("# %d starts each, one after another\n", runs);
  Figure("spawn_true_wall_ms", floor.wall_ms, "ms");
  Figure("spawn_true_cpu_ms", floor.cpu_ms, "ms");
  Figure("spawn_podworker_wall_ms", agent.wall_ms, "ms");
  Figure("spawn_podworker_cpu_ms", agent.cpu_ms, "ms");
  Figure("spawn_helper_wall_ms", small.wall_ms, "ms");
  Figure("spawn_helper_cpu_ms", small.cpu_ms, "ms");
  Figure("spawn_rank_wall_ms", lean.wall_ms, "ms");
  Figure("spawn_rank_cpu_ms", lean.cpu_ms, "ms");
  Figure("spawn_helper_vs_true_cpu", small.cpu_ms / floor.cpu_ms, "x");
  Figure("spawn_rank_vs_true_cpu", lean.cpu_ms / floor.cpu_ms, "x");
  Figure("spawn_podworker_vs_helper_cpu", agent.cpu_ms / small.cpu_ms, "x");
  Figure("spawn_helper_vs_rank_cpu", small.cpu_ms / lean.cpu_ms, "x");
  // Interleaved, twice each: the machine's noise falls on both.
  double forked = 0, spawned = 0;
  for (int round = 0; round < 2; ++round) {
    forked += AgentSpawnCpuMs(true, runs / 2) / 2;
    spawned += AgentSpawnCpuMs(false, runs / 2) / 2;
  }
  Figure("spawn_agent_fork_cpu_ms", forked, "ms");
  Figure("spawn_agent_child_cpu_ms", spawned, "ms");
  Figure("spawn_agent_fork_vs_child_cpu", forked / spawned, "x");
  if (!podctl.empty()) {
    const Cost cli = Measure({podctl, "--help"}, runs);
    Figure("spawn_podctl_wall_ms", cli.wall_ms, "ms");
    Figure("spawn_podctl_cpu_ms", cli.cpu_ms, "ms");
    Figure("spawn_podctl_vs_true_cpu", cli.cpu_ms / floor.cpu_ms, "x");
  }
  return 0;
}
