// `podsim replay`: runs every requested policy on the same trace and prints them side by side
// (a table, or one JSON object keyed by policy with --json).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "common/clock.h"
#include "pod/fleet_yaml.h"
#include "scheduler/sim/commands.h"
#include "scheduler/sim/report.h"
#include "scheduler/sim/simulator.h"
#include "scheduler/sim/trace.h"

namespace podsched::sim {
namespace {

// What the command line sets: the trace, the output, and the simulator's options (bound straight
// to SimOptions; `profile` and `pods` are filled in per run).
struct ReplayFlags {
  std::string trace;
  std::string format = "podsim";
  std::vector<std::string> policies = {"fifo-first-fit", "fair-best-fit"};
  bool json = false;
  std::string csv_timeseries;
  int pods = 0;  // 0: the default for the format
  std::string fleet;  // a fleet file (pod/fleet_yaml.h) instead of --pods
  double preemptible_fraction = 0.3;
  double checkpoint_interval_s = 1800;
  int64_t max_rows = 0;
  bool no_estimates = false;
  int threads = 0;  // policies replayed at once; 0: one per core
  SimOptions sim;
};

// The progress bar on a terminal: one line, every policy's share of its jobs finished, redrawn
// when one of them moves (called from the replays' threads).
class ReplayProgress {
 public:
  ReplayProgress(const std::vector<std::string>& policies, bool shown)
      : policies_(policies), percent_(policies.size(), -1), shown_(shown) {}
  void Set(size_t policy, double done) {
    if (!shown_) return;
    const int percent = static_cast<int>(done * 100);
    std::lock_guard lock(mutex_);
    if (percent_[policy] == percent) return;
    percent_[policy] = percent;
    // One bar for one policy; several side by side are shorter, to stay on one line.
    const int width = policies_.size() == 1 ? 40 : 10;
    std::string line = "\r";
    for (size_t i = 0; i < policies_.size(); ++i) {
      const int filled = std::max(0, percent_[i]) * width / 100;
      line += (i == 0 ? "" : "  ") + policies_[i] + " [" +
              std::string(static_cast<size_t>(filled), '#') +
              std::string(static_cast<size_t>(width - filled), ' ') + "] " +
              std::to_string(std::max(0, percent_[i])) + "%";
    }
    std::fputs(line.c_str(), stderr);
  }
  void Done() {
    if (shown_) std::fputs("\n", stderr);
  }

 private:
  const std::vector<std::string>& policies_;
  std::vector<int> percent_;
  const bool shown_;
  std::mutex mutex_;
};

[[noreturn]] void Fail(const std::string& message, int code = 2) {
  std::cerr << "podsim replay: " << message << "\n";
  throw CLI::RuntimeError(code);
}

Trace LoadTrace(const ReplayFlags& flags) {
  std::ifstream in(flags.trace);
  if (!in) Fail("cannot open " + flags.trace);
  Result<Trace> trace = InvalidArgument("--format must be podsim or philly, not " + flags.format);
  if (flags.format == "podsim") {
    trace = ParsePodsimCsv(in);
  } else if (flags.format == "philly") {
    trace = ParsePhilly(in, {flags.preemptible_fraction, flags.sim.seed,
                             flags.checkpoint_interval_s, flags.max_rows});
  }
  if (!trace) Fail(flags.trace + ": " + trace.error().message());
  return std::move(*trace);
}

std::vector<pod::FleetPodSpec> LoadFleet(const ReplayFlags& flags) {
  if (flags.fleet.empty()) return {};
  if (flags.pods > 0) Fail("--fleet and --pods: give one of them");
  std::ifstream in(flags.fleet);
  if (!in) Fail("cannot open " + flags.fleet);
  std::stringstream text;
  text << in.rdbuf();
  auto pods = pod::ParseFleetYaml(text.str());
  if (!pods) Fail(flags.fleet + ": " + pods.error().message());
  return std::move(*pods);
}

void RunReplay(const ReplayFlags& flags) {
  const std::vector<pod::FleetPodSpec> fleet = LoadFleet(flags);
  const Trace trace = LoadTrace(flags);
  // Philly offers ~1,230 cores on average once GPUs are rounded up to v2 slices (2.4 full v2
  // pods). At 3 pods (80% nominal) the queue grows to 10,000 jobs and waits reach days; 4 pods
  // (60% nominal) keep it busy with waits of hours (docs/bench-scheduler.md). Synthetic traces
  // are generated for one pod.
  const int pods = flags.pods > 0 ? flags.pods : (flags.format == "philly" ? 4 : 1);
  const bool bar = isatty(STDERR_FILENO) == 1;
  ReplayProgress progress(flags.policies, bar);
  std::vector<SimOptions> runs;
  for (size_t i = 0; i < flags.policies.size(); ++i) {
    SimOptions options = flags.sim;
    options.profile = flags.policies[i];
    options.pods = pods;
    options.fleet = fleet;
    options.exact_estimates = !flags.no_estimates;
    if (bar) options.progress = [&progress, i](double done) { progress.Set(i, done); };
    runs.push_back(std::move(options));
  }
  // Side by side, one per core (the slowest policy's time, not the sum of them).
  std::vector<Result<SimResult>> outcomes = SimulateEach(trace, runs, flags.threads, RealClock());
  progress.Done();
  std::vector<SimResult> results;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (!outcomes[i]) Fail(flags.policies[i] + ": " + outcomes[i].error().message());
    results.push_back(std::move(*outcomes[i]));
  }
  if (flags.json) {
    std::cout << ResultsJson(results) << "\n";
  } else {
    std::cout << "trace " << flags.trace << ": " << trace.jobs.size() << " jobs";
    if (trace.rejected > 0) std::cout << " (" << trace.rejected << " rows rejected: larger than a pod)";
    if (fleet.empty()) {
      std::cout << ", " << pods << " v2 pod(s)\n";
    } else {
      int hosts = 0;
      for (const pod::FleetPodSpec& p : fleet) hosts += p.host_rows * p.host_cols;
      std::cout << ", fleet " << flags.fleet << " (" << fleet.size() << " pods, " << hosts
                << " hosts)\n";
    }
    PrintTable(results, std::cout);
  }
  if (!flags.csv_timeseries.empty()) {
    std::ofstream out(flags.csv_timeseries);
    WriteTimeseriesCsv(results, out);
    out.close();
    if (!out) Fail("cannot write " + flags.csv_timeseries, 1);
  }
}

}  // namespace

void RegisterReplayCommand(CLI::App& app) {
  auto flags = std::make_shared<ReplayFlags>();
  CLI::App* sub = app.add_subcommand(
      "replay", "Replay a trace through the scheduling core under several policies, side by side");
  sub->add_option("--trace", flags->trace, "trace file")->required();
  sub->add_option("--format", flags->format, "podsim (CSV, see docs/scheduler.md) or philly")
      ->capture_default_str();
  sub->add_option("--policies", flags->policies, "scheduler profiles, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_flag("--json", flags->json, "print one JSON object keyed by policy");
  sub->add_option("--threads", flags->threads,
                  "policies replayed at once (0: one per core; each holds its own copy of the "
                  "scheduler's state)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  sub->add_option("--csv-timeseries", flags->csv_timeseries,
                  "write utilization/queue over time (hourly) to this CSV file");
  sub->add_option("--pods", flags->pods, "number of v2 pods (default: 4 for philly, else 1)");
  sub->add_option("--fleet", flags->fleet,
                  "a fleet file (YAML, e.g. deploy/fleets/grant.yaml) instead of --pods");
  sub->add_option("--seed", flags->sim.seed, "seed (preemptible choice, reclaims, failures)")
      ->capture_default_str();
  sub->add_option("--preemptible-fraction", flags->preemptible_fraction,
                  "philly: fraction of jobs made preemptible")
      ->capture_default_str();
  sub->add_option("--checkpoint-interval", flags->checkpoint_interval_s,
                  "philly: checkpoint interval of every job, seconds")
      ->capture_default_str();
  sub->add_option("--max-rows", flags->max_rows, "philly: read only the first N jobs");
  sub->add_option("--reclaim-rate", flags->sim.reclaim_rate_per_hour,
                  "provider reclaims per preemptible allocation-hour")
      ->capture_default_str();
  sub->add_option("--host-failures", flags->sim.host_failures_per_host_day, "host failures per host-day")
      ->capture_default_str();
  sub->add_option("--tick", flags->sim.tick_s, "scheduling pass interval, simulated seconds")
      ->capture_default_str();
  sub->add_option("--quota-on-demand", flags->sim.quota_on_demand_cores,
                  "per-user on-demand cores over the fleet (default: no quota)");
  sub->add_option("--quota-preemptible", flags->sim.quota_preemptible_cores,
                  "per-user preemptible cores over the fleet (default: no quota)");
  sub->add_option("--min-runtime", flags->sim.min_runtime_before_preemption_s,
                  "seconds a job runs before it may be preempted (anti-thrash)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  sub->add_option("--defrag-budget", flags->sim.defrag_budget_core_seconds_per_hour,
                  "defragmentation: core-seconds of lost work an hour that moving young "
                  "preemptible jobs for a fragmented on-demand job may cost (0: off)")
      ->check(CLI::Range(0.0, 1e12))
      ->capture_default_str();
  sub->add_option("--checkpoint-gib", flags->sim.checkpoint_gib,
                  "every job's checkpoint size: a job resumed in another zone than the one it "
                  "first ran in, and each checkpoint it writes there, is billed egress (0: off)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  sub->add_flag("--no-estimates", flags->no_estimates,
                "do not give the scheduler the trace's durations as runtime estimates");
  sub->callback([flags] { RunReplay(*flags); });
}

}  // namespace podsched::sim
