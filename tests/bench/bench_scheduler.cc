// bench_scheduler: scheduling pass latency with many queued jobs on a v3 pod (after a
// submission, and after a job's end), one placement decision across a fleet of 8 v3 pods and 100
// v2-8 devices (issue 28), and podsim throughput on a synthetic trace and on the Philly trace (on
// 4 v2 pods, and on a fleet file), and a frag trace without and with defragmentation.
//
//   bench_scheduler [--queued 1000,10000] [--passes 200] [--sim-jobs 100000]
//                   [--gangs-jobs 20000] [--defrag-jobs 40000] [--defrag-seeds 8]
//                   [--decisions 2000] [--philly FILE]
//                   [--philly-rows 0]
//                   [--fleet FILE]
//
// Prints a table and `FIGURE <name> <value> <unit>` lines.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/big_buffer.h"
#include "common/clock.h"
#include "pod/fleet_yaml.h"
#include "pod/placement.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/sim/generator.h"
#include "scheduler/sim/simulator.h"
#include "scheduler/sim/trace.h"

namespace podsched {
namespace {

TimePoint At(double s) { return TimePoint{} + FromSeconds(s); }

core::JobSpec Spec(const std::string& user, const std::string& type, bool preemptible,
                   int priority) {
  core::JobSpec spec;
  spec.user = UserName(user);
  spec.accelerator = type;
  spec.preemptible = preemptible;
  spec.priority = priority;
  spec.command = "podtrain";
  spec.expected_runtime = std::chrono::hours(2);
  return spec;
}

double Pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * (v.size() - 1) + 0.5));
  return v[i];
}

// A full v3 pod of high-priority on-demand work and `queued` waiting jobs that can neither fit
// nor preempt: every pass walks the whole queue. Each measured pass is made necessary by one
// submission (and the next one by cancelling it), so the queue length stays constant.
// `after_release`: before each measured pass one of the running jobs also ends, so its host is
// free (a waiting v3-8 takes it) and the leases have changed: no waiting job's memo holds, and
// the pass judges every job again (docs/scheduler.md, "Memos"). That is the pass after each
// job's end; the other is the pass after a submission, a cancel or a reported step.
// `after_start`: a quarter of the pod's hosts are free, none next to another (no waiting job
// fits), and no job waits for a single host. Before each measured pass an urgent on-demand v3-8
// starts on one of them (in a pass of its own); the measured pass is the next one, made by a
// submission as above. An on-demand job is no victim, so the blocked jobs' memos hold
// (HostLeases::blocked_version) behind the same head as before (PassHeads).
enum class PassAfter { kSubmission, kRelease, kStart };
void BenchPass(int queued, int passes, PassAfter after) {
  const bool after_release = after == PassAfter::kRelease;
  const bool after_start = after == PassAfter::kStart;
  RealClock clock;
  core::InMemoryJobRepository repo(/*keep_events=*/false);
  core::SchedulerConfig config;
  config.default_quota = core::Quota{1 << 20, 1 << 20};
  auto sched =
      core::Scheduler::Create(pod::Pod::Full("v3", pod::Generation::kV3), config, &repo, At(0));
  if (!sched) std::abort();
  core::Scheduler& s = **sched;
  // Ends a running job (its hosts free), or stops the benchmark.
  const auto end = [&](JobId owner, TimePoint now) {
    const core::JobRecord* job = s.Find(owner);
    if (job == nullptr || !core::HoldsHosts(job->state) ||
        !s.ReportExited({owner, job->epoch}, std::nullopt, core::ExitKind::kSucceeded, "", now)) {
      std::fprintf(stderr, "bench: job %lld cannot end\n", static_cast<long long>(owner.value()));
      std::abort();
    }
  };
  std::vector<JobId> owners;
  for (int i = 0; i < 256; ++i) {
    auto id = s.Submit(Spec("owner", "v3-8", false, 10), At(0));
    if (!id) std::abort();
    owners.push_back(*id);
  }
  s.Tick(At(0));
  int free_hosts = 0;
  if (after_start) {
    for (JobId owner : owners) {
      const pod::HostCoord at = s.Find(owner)->placement->rect.origin;
      if (at.row % 2 != 0 || at.col % 2 != 0) continue;
      end(owner, At(0.5));
      ++free_hosts;
    }
  }
  std::mt19937_64 rng(1);
  const char* types[] = {"v3-8", "v3-8", "v3-32", "v3-64", "v3-128", "v3-512"};
  for (int i = 0; i < queued; ++i) {
    // After a start no job waits for one host (a v3-8 would take a free one).
    const char* type = after_start ? types[2 + rng() % 4] : types[rng() % 6];
    (void)s.Submit(Spec("user" + std::to_string(rng() % 50), type, rng() % 2 == 0,
                        static_cast<int>(rng() % 5)),
                   At(1 + i * 0.001));
  }
  s.Tick(At(100));
  std::vector<double> us;
  // After a release: one pass per running job at most (each ends once).
  const int measured = after_release ? std::min<int>(passes, static_cast<int>(owners.size()))
                       : after_start ? std::min(passes, free_hosts)
                                     : passes;
  int64_t skipped = 0;
  for (int i = 0; i < measured; ++i) {
    const TimePoint now = At(200 + i);
    if (after_release) end(owners[static_cast<size_t>(i)], now);
    if (after_start) {
      // Short (its end expected before the backfill head's start): the head keeps its rectangle.
      core::JobSpec urgent = Spec("urgent", "v3-8", false, 9);
      urgent.expected_runtime = std::chrono::minutes(1);
      auto started = s.Submit(urgent, now);
      s.Tick(now);
      const core::JobRecord* job = started ? s.Find(*started) : nullptr;
      if (job == nullptr || job->state != core::JobState::kPlaced) {
        std::fprintf(stderr, "bench: the urgent v3-8 did not start\n");
        std::abort();
      }
    }
    // After a start the submission must not take a free host itself (that is a start).
    auto id = s.Submit(Spec("user0", after_start ? "v3-512" : "v3-8", false, 0), now);
    const int64_t skipped_before = s.stats().skipped_by_memo;
    const TimePoint start = clock.Now();
    s.Tick(now);
    us.push_back(ToSeconds(clock.Now() - start) * 1e6);
    skipped += s.stats().skipped_by_memo - skipped_before;
    if (id) (void)s.Cancel(*id, now);
  }
  const double skipped_per_pass = static_cast<double>(skipped) / std::max(measured, 1);
  // The figures' suffix and the line's words, per scenario.
  const char* suffix = after_release ? "_after_release" : after_start ? "_after_start" : "";
  const char* words = after_release ? ", a job ended before each"
                      : after_start ? ", an on-demand job started before each"
                                    : "";
  const std::string k =
      (queued >= 1000 ? std::to_string(queued / 1000) + "k" : std::to_string(queued)) + "_queued" +
      suffix;
  std::printf(
      "pass with %6d queued on v3-2048%s: median %9.1f us  p99 %9.1f us  (%d passes, %.0f jobs "
      "skipped by memo each)\n",
      queued, words, Pct(us, 50), Pct(us, 99), measured, skipped_per_pass);
  std::printf("FIGURE sched_pass_median_%s %.1f us\n", k.c_str(), Pct(us, 50));
  std::printf("FIGURE sched_pass_p99_%s %.1f us\n", k.c_str(), Pct(us, 99));
  std::printf("FIGURE sched_pass_skipped_by_memo_%s %.0f jobs\n", k.c_str(), skipped_per_pass);
}

// One placement decision (PlacementPolicy::ChooseAmong, what a pass's Score step runs) across a
// fleet of 8 full v3 pods and 100 v2-8 devices, filled to about 60% by random slices, for random
// v3 types and v2-8s.
void BenchFleetPlacement(int decisions) {
  std::vector<pod::FleetPodSpec> specs;
  for (int i = 0; i < 8; ++i)
    specs.push_back({"v3-" + std::to_string(i), pod::Generation::kV3, 16, 16, ""});
  for (int i = 0; i < 100; ++i)
    specs.push_back({"dev-" + std::to_string(i), pod::Generation::kV2, 1, 1, ""});
  pod::Fleet fleet = *pod::Fleet::Create(specs);
  std::mt19937_64 rng(7);
  // The v3 pods to 60% by random slices at random positions (not first-fit's packing: a
  // fragmented fleet), and every other device.
  const char* fill[] = {"v3-8", "v3-8", "v3-32", "v3-64", "v3-128"};
  int64_t alloc = 1;
  const int v3_hosts = 8 * 256;
  while (fleet.AllocatedHosts() < v3_hosts * 6 / 10) {
    const pod::AcceleratorType type = *fleet.ParseType(fill[rng() % 5]);
    const int pick = static_cast<int>(rng() % 8);
    auto legal = fleet.pod(pick).LegalPlacements(type.shape());
    if (legal.empty()) continue;
    const pod::FleetPlacement p{pick, legal[rng() % legal.size()]};
    if (Status s = fleet.Allocate(AllocationId(alloc++), p); !s.ok()) {
      std::fprintf(stderr, "filling the fleet: %s\n", s.ToString().c_str());
      std::abort();
    }
  }
  for (int d = 8; d < fleet.size(); d += 2) {
    if (!fleet.Allocate(AllocationId(alloc++), {d, pod::Placement{{0, 0}, {1, 1}}}).ok()) {
      std::abort();
    }
  }
  const char* asks[] = {"v3-8", "v3-32", "v3-64", "v3-128", "v2-8"};
  // Each pod keeps an index of its free hosts and best-fit's answer per type in it
  // (pod/free_index.h) until the pod changes. On an unchanged fleet every decision after the first
  // of its type reads them; "one pod changed" changes a random candidate pod before each decision
  // (a host's draining flag set to what it is: a new index, nothing remembered), as a placement
  // or a job's end does between two decisions of a pass.
  for (const char* policy_name : {"first-fit", "best-fit"}) {
    for (const bool change_one : {false, true}) {
      auto policy = *pod::MakePlacementPolicy(policy_name);
      RealClock clock;
      std::vector<double> us;
      int none = 0;  // no candidate pod has a position (a fragmented fleet)
      for (int i = 0; i < decisions; ++i) {
        const pod::AcceleratorType type = *fleet.ParseType(asks[i % 5]);
        const std::vector<int> candidates = fleet.PodsThatCanHold(type);
        if (change_one) {
          const HostId h = fleet.FleetHost(candidates[rng() % candidates.size()], HostId(0));
          (void)fleet.SetDraining(h, fleet.host(h).draining);
        }
        const TimePoint start = clock.Now();
        auto chosen = policy->ChooseAmong(fleet.pods(), candidates, type);
        us.push_back(ToSeconds(clock.Now() - start) * 1e6);
        none += chosen ? 0 : 1;
      }
      const std::string name(policy_name);
      std::printf(
          "placement across 8 v3 pods + 100 devices (%.0f%% held), %-9s %-15s: median "
          "%7.1f us  p99 %7.1f us  (%d decisions, %d without a position)\n",
          100.0 * fleet.AllocatedHosts() / fleet.num_hosts(), policy_name,
          change_one ? "one pod changed" : "unchanged", Pct(us, 50), Pct(us, 99), decisions, none);
      std::string key = name == "best-fit" ? "best_fit" : "first_fit";
      if (change_one) key += "_one_pod_changed";
      std::printf("FIGURE fleet_placement_median_%s %.1f us\n", key.c_str(), Pct(us, 50));
      std::printf("FIGURE fleet_placement_p99_%s %.1f us\n", key.c_str(), Pct(us, 99));
    }
  }
}

void BenchSim(const sim::Trace& trace, const std::string& name, int pods,
              std::vector<pod::FleetPodSpec> fleet = {}) {
  RealClock clock;
  sim::SimOptions options;
  options.profile = "fair-best-fit";
  options.pods = pods;
  options.fleet = fleet;
  const TimePoint start = clock.Now();
  auto r = sim::Simulate(trace, options);
  const double wall = ToSeconds(clock.Now() - start);
  if (!r) {
    std::fprintf(stderr, "simulation failed: %s\n", r.error().ToString().c_str());
    std::exit(1);
  }
  const int pod_count = fleet.empty() ? pods : static_cast<int>(fleet.size());
  std::printf(
      "podsim %-12s %7zu jobs, %d pod(s): %.2f s wall, %lld events (%.0f/s), "
      "utilization %.3f, %lld unfinished\n",
      name.c_str(), trace.jobs.size(), pod_count, wall, static_cast<long long>(r->events),
      r->events / wall, r->utilization, static_cast<long long>(r->unfinished));
  std::printf("FIGURE podsim_wall_s_%s %.2f s\n", name.c_str(), wall);
  std::printf("FIGURE podsim_events_per_s_%s %.0f events/s\n", name.c_str(), r->events / wall);
}

// Issue 29's "podsim, Philly (two policies)": `podsim replay`'s two default policies one after the
// other and side by side (SimulateEach, one per core), in one run.
void BenchPolicies(const sim::Trace& trace, const std::string& name, int pods) {
  RealClock clock;
  std::vector<sim::SimOptions> runs(2);
  runs[0].profile = "fifo-first-fit";
  runs[1].profile = "fair-best-fit";
  for (sim::SimOptions& r : runs) r.pods = pods;
  double wall[2] = {0, 0};
  for (int side_by_side : {0, 1}) {
    const TimePoint start = clock.Now();
    for (const auto& r : sim::SimulateEach(trace, runs, side_by_side ? 0 : 1, clock)) {
      if (!r) {
        std::fprintf(stderr, "simulation failed: %s\n", r.error().ToString().c_str());
        std::exit(1);
      }
    }
    wall[side_by_side] = ToSeconds(clock.Now() - start);
  }
  std::printf("podsim %-12s two policies: %.2f s one after the other, %.2f s side by side\n",
              name.c_str(), wall[0], wall[1]);
  std::printf("FIGURE podsim_wall_s_%s_two_policies_one_after_another %.2f s\n", name.c_str(),
              wall[0]);
  std::printf("FIGURE podsim_wall_s_%s_two_policies %.2f s\n", name.c_str(), wall[1]);
}

// Issue 29's "FIFO behind a large head": a gangs trace (small jobs and a few users' large
// gangs, offered load 1.0, per-user quotas) replayed under fifo-first-fit and fair-best-fit. A
// FIFO queue grows to thousands of jobs behind a gang that waits for room, and every pass walks
// it; fair share with backfill keeps the queue short. The ratio of the two wall times is the
// figure (the goal is within 2x).
void BenchFifoBehindLargeHead(int64_t jobs) {
  sim::Trace trace;
  trace.jobs = sim::Generate({jobs, 1, sim::Mix::kGangs, 1.0, 20});
  double wall[2] = {0, 0};
  const char* profiles[2] = {"fifo-first-fit", "fair-best-fit"};
  for (int i = 0; i < 2; ++i) {
    RealClock clock;
    sim::SimOptions options;
    options.profile = profiles[i];
    options.pods = 1;
    options.quota_on_demand_cores = 256;
    options.quota_preemptible_cores = 512;
    const TimePoint start = clock.Now();
    auto r = sim::Simulate(trace, options);
    wall[i] = ToSeconds(clock.Now() - start);
    if (!r) {
      std::fprintf(stderr, "simulation failed: %s\n", r.error().ToString().c_str());
      std::exit(1);
    }
    int64_t peak = 0;
    for (const sim::Sample& sample : r->timeseries) peak = std::max(peak, sample.queued);
    std::printf(
        "podsim gangs %-15s %7zu jobs: %.2f s wall, %lld events (%.0f/s), %lld passes, "
        "queue up to %lld\n",
        profiles[i], trace.jobs.size(), wall[i], static_cast<long long>(r->events),
        r->events / wall[i], static_cast<long long>(r->passes), static_cast<long long>(peak));
  }
  const std::string k = jobs >= 1000 ? std::to_string(jobs / 1000) + "k" : std::to_string(jobs);
  std::printf("FIGURE podsim_gangs_%s_fifo_wall_s %.2f s\n", k.c_str(), wall[0]);
  std::printf("FIGURE podsim_gangs_%s_fair_wall_s %.2f s\n", k.c_str(), wall[1]);
  std::printf("FIGURE podsim_gangs_%s_fifo_over_fair %.2f x\n", k.c_str(), wall[0] / wall[1]);
}

// Issue 28's "fragmentation blocks with and without defragmentation": frag traces (short
// preemptible v2-8 jobs churning, on-demand v2-32 and v2-128 blocks among them; load 0.7), one
// per seed 1..seeds, on one pod under fair-best-fit, without defragmentation and with a budget
// of 10 core-hours of lost work an hour. The on-demand jobs' wait (mean and p99 of each trace,
// averaged over the traces: one trace's schedule is chaotic) is the figure; the moves and what
// they cost beside it.
void BenchDefrag(int64_t jobs, int seeds) {
  const double budgets[2] = {0, 36000};
  const char* names[2] = {"off", "on"};
  double mean[2] = {0, 0}, p99[2] = {0, 0}, goodput[2] = {0, 0}, lost = 0;
  int64_t moves = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    sim::Trace trace;
    trace.jobs = sim::Generate({jobs, static_cast<uint64_t>(seed), sim::Mix::kFrag, 0.7, 20});
    for (int i = 0; i < 2; ++i) {
      sim::SimOptions options;
      options.profile = "fair-best-fit";
      options.pods = 1;
      options.defrag_budget_core_seconds_per_hour = budgets[i];
      auto r = sim::Simulate(trace, options);
      if (!r) {
        std::fprintf(stderr, "simulation failed: %s\n", r.error().ToString().c_str());
        std::exit(1);
      }
      std::vector<double> wait = r->on_demand.wait_s;
      std::sort(wait.begin(), wait.end());
      double sum = 0;
      for (double w : wait) sum += w;
      const double m = wait.empty() ? 0 : sum / static_cast<double>(wait.size());
      const double p = wait.empty() ? 0 : wait[std::min(wait.size() - 1, wait.size() * 99 / 100)];
      const sim::ClassMetrics& pre = r->preemptible;
      const double g = pre.held_core_h > 0 ? pre.useful_core_h / pre.held_core_h : 0;
      std::printf(
          "podsim frag seed %d, %zu jobs, defragmentation %-3s: on-demand wait mean %.0f s, "
          "p99 %.0f s; %lld moves losing %.1f core-h; preemptible goodput %.4f\n",
          seed, trace.jobs.size(), names[i], m, p, static_cast<long long>(r->defrag_moves),
          r->defrag_lost_core_h, g);
      mean[i] += m / seeds;
      p99[i] += p / seeds;
      goodput[i] += g / seeds;
      if (i == 1) {
        moves += r->defrag_moves;
        lost += r->defrag_lost_core_h;
      }
    }
  }
  for (int i = 0; i < 2; ++i) {
    std::printf("FIGURE defrag_%s_on_demand_wait_mean %.0f s\n", names[i], mean[i]);
    std::printf("FIGURE defrag_%s_on_demand_wait_p99 %.0f s\n", names[i], p99[i]);
    std::printf("FIGURE defrag_%s_preemptible_goodput %.4f ratio\n", names[i], goodput[i]);
  }
  std::printf("FIGURE defrag_moves_per_trace %.1f jobs\n", static_cast<double>(moves) / seeds);
  std::printf("FIGURE defrag_lost_core_h_per_trace %.1f core-h\n", lost / seeds);
}

}  // namespace
}  // namespace podsched

int main(int argc, char** argv) {
  using namespace podsched;
  RestartWithHugePageHeap(argv);  // as podsim and podsched do
  std::vector<int> queued = {1000, 10000};
  int passes = 200;
  int64_t sim_jobs = 100000;
  std::string philly;
  int64_t philly_rows = 0;
  int decisions = 2000;
  std::string fleet_file;
  int64_t gangs_jobs = 20000;
  int64_t defrag_jobs = 40000;
  int defrag_seeds = 8;
  CLI::App app{"Scheduling pass latency, fleet placement and podsim throughput"};
  app.add_option("--queued", queued, "queue lengths for the pass benchmark (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(1, 10000000));
  app.add_option("--passes", passes, "measured passes per queue length")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--sim-jobs", sim_jobs, "jobs of the synthetic podsim trace (0: skip)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--gangs-jobs", gangs_jobs,
                 "jobs of the gangs trace replayed FIFO and fair share (0: skip)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--defrag-jobs", defrag_jobs,
                 "jobs of the frag trace replayed without and with defragmentation (0: skip)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--defrag-seeds", defrag_seeds, "frag traces (seeds 1..N)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--decisions", decisions, "placement decisions on the fleet (0: skip)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--philly", philly, "the Philly trace (CSV) to replay")->check(CLI::ExistingFile);
  app.add_option("--philly-rows", philly_rows, "rows of it to read (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--fleet", fleet_file, "a fleet file to replay the Philly trace on as well")
      ->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  for (int q : queued) {
    BenchPass(q, passes, PassAfter::kSubmission);
    BenchPass(q, passes, PassAfter::kRelease);
    BenchPass(q, passes, PassAfter::kStart);
  }
  if (decisions > 0) BenchFleetPlacement(decisions);
  if (gangs_jobs > 0) BenchFifoBehindLargeHead(gangs_jobs);
  if (defrag_jobs > 0) BenchDefrag(defrag_jobs, defrag_seeds);
  if (sim_jobs > 0) {
    sim::Trace trace;
    trace.jobs = sim::Generate({sim_jobs, 1, sim::Mix::kGrant, 0.9, 20});
    const std::string name =
        sim_jobs >= 1000 ? std::to_string(sim_jobs / 1000) + "k" : std::to_string(sim_jobs);
    BenchSim(trace, name, 1);
    // This process's peak so far: the simulation's, or the pass benchmark's if that was larger
    // (an upper bound of the simulator's own; issue 29's goal is < 1 GB on the 100k trace).
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
      if (!line.starts_with("VmHWM:")) continue;
      const double mb = std::strtod(line.c_str() + 6, nullptr) / 1024;
      std::printf("podsim %s: peak RSS %.0f MB\n", name.c_str(), mb);
      std::printf("FIGURE podsim_peak_rss_%s %.1f MB\n", name.c_str(), mb);
    }
  }
  if (!philly.empty()) {
    std::ifstream in(philly);
    auto trace = sim::ParsePhilly(in, {0.3, 1, 1800, philly_rows});
    if (!trace) {
      std::fprintf(stderr, "%s: %s\n", philly.c_str(), trace.error().ToString().c_str());
      return 1;
    }
    BenchSim(*trace, "philly", 4);
    BenchPolicies(*trace, "philly", 4);
    if (!fleet_file.empty()) {
      std::ifstream f(fleet_file);
      std::stringstream text;
      text << f.rdbuf();
      auto pods = pod::ParseFleetYaml(text.str());
      if (!f || !pods) {
        std::fprintf(stderr, "%s: %s\n", fleet_file.c_str(),
                     pods ? "cannot read" : pods.error().ToString().c_str());
        return 1;
      }
      BenchSim(*trace, "philly_fleet", 0, *pods);
      // Multislice on the fleet (issue 28 stage 2): a grant trace of the same length in which
      // a third of the jobs ask for 2, 4 or 8 v2-8 slices, placed whole in one zone.
      sim::Trace multi;
      sim::GenOptions gen{static_cast<int64_t>(trace->jobs.size()), 1, sim::Mix::kGrant, 0.9, 20};
      gen.multislice = 0.3;
      multi.jobs = sim::Generate(gen);
      BenchSim(multi, "multislice_fleet", 0, *pods);
    }
  }
  return 0;
}
