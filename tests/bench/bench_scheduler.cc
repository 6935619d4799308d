// bench_scheduler: scheduling pass latency with many queued jobs on a v3 pod, and podsim
// throughput on a synthetic trace and on the Philly trace.
//
//   bench_scheduler [--queued 1000,10000] [--passes 200] [--sim-jobs 100000]
//                   [--philly FILE] [--philly-rows 0]
//
// Prints a table and `FIGURE <name> <value> <unit>` lines.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/clock.h"
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
void BenchPass(int queued, int passes) {
  RealClock clock;
  core::InMemoryJobRepository repo(/*keep_events=*/false);
  core::SchedulerConfig config;
  config.default_quota = core::Quota{1 << 20, 1 << 20};
  auto sched = core::Scheduler::Create(pod::Pod::Full("v3", pod::Generation::kV3), config,
                                       &repo, At(0));
  if (!sched) std::abort();
  core::Scheduler& s = **sched;
  for (int i = 0; i < 256; ++i) (void)s.Submit(Spec("owner", "v3-8", false, 10), At(0));
  s.Tick(At(0));
  std::mt19937_64 rng(1);
  const char* types[] = {"v3-8", "v3-8", "v3-32", "v3-64", "v3-128", "v3-512"};
  for (int i = 0; i < queued; ++i) {
    (void)s.Submit(Spec("user" + std::to_string(rng() % 50), types[rng() % 6], rng() % 2 == 0,
                        static_cast<int>(rng() % 5)),
                   At(1 + i * 0.001));
  }
  s.Tick(At(100));
  std::vector<double> us;
  for (int i = 0; i < passes; ++i) {
    auto id = s.Submit(Spec("user0", "v3-8", false, 0), At(200 + i));
    const TimePoint start = clock.Now();
    s.Tick(At(200 + i));
    us.push_back(ToSeconds(clock.Now() - start) * 1e6);
    if (id) (void)s.Cancel(*id, At(200 + i));
  }
  const std::string k = queued >= 1000 ? std::to_string(queued / 1000) + "k" : std::to_string(queued);
  std::printf("pass with %6d queued on v3-2048: median %9.1f us  p99 %9.1f us  (%d passes)\n",
              queued, Pct(us, 50), Pct(us, 99), passes);
  std::printf("FIGURE sched_pass_median_%s_queued %.1f us\n", k.c_str(), Pct(us, 50));
  std::printf("FIGURE sched_pass_p99_%s_queued %.1f us\n", k.c_str(), Pct(us, 99));
}

void BenchSim(const sim::Trace& trace, const std::string& name, int pods) {
  RealClock clock;
  sim::SimOptions options;
  options.profile = "fair-best-fit";
  options.pods = pods;
  const TimePoint start = clock.Now();
  auto r = sim::Simulate(trace, options);
  const double wall = ToSeconds(clock.Now() - start);
  if (!r) {
    std::fprintf(stderr, "simulation failed: %s\n", r.error().ToString().c_str());
    std::exit(1);
  }
  std::printf("podsim %-8s %7zu jobs, %d pod(s): %.2f s wall, %lld events (%.0f/s), "
              "utilization %.3f, %lld unfinished\n",
              name.c_str(), trace.jobs.size(), pods, wall, static_cast<long long>(r->events),
              r->events / wall, r->utilization, static_cast<long long>(r->unfinished));
  std::printf("FIGURE podsim_wall_s_%s %.2f s\n", name.c_str(), wall);
  std::printf("FIGURE podsim_events_per_s_%s %.0f events/s\n", name.c_str(), r->events / wall);
}

}  // namespace
}  // namespace podsched

int main(int argc, char** argv) {
  using namespace podsched;
  std::vector<int> queued = {1000, 10000};
  int passes = 200;
  int64_t sim_jobs = 100000;
  std::string philly;
  int64_t philly_rows = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--queued") {
      queued.clear();
      std::stringstream ss(value);
      for (std::string n; std::getline(ss, n, ',');) queued.push_back(std::stoi(n));
    } else if (flag == "--passes") {
      passes = std::stoi(value);
    } else if (flag == "--sim-jobs") {
      sim_jobs = std::stoll(value);
    } else if (flag == "--philly") {
      philly = value;
    } else if (flag == "--philly-rows") {
      philly_rows = std::stoll(value);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  for (int q : queued) BenchPass(q, passes);
  if (sim_jobs > 0) {
    sim::Trace trace;
    trace.jobs = sim::Generate({sim_jobs, 1, sim::Mix::kGrant, 0.9, 20});
    const std::string name = sim_jobs >= 1000 ? std::to_string(sim_jobs / 1000) + "k"
                                              : std::to_string(sim_jobs);
    BenchSim(trace, name, 1);
  }
  if (!philly.empty()) {
    std::ifstream in(philly);
    auto trace = sim::ParsePhilly(in, {0.3, 1, 1800, philly_rows});
    if (!trace) {
      std::fprintf(stderr, "%s: %s\n", philly.c_str(), trace.error().ToString().c_str());
      return 1;
    }
    BenchSim(*trace, "philly", 4);
  }
  return 0;
}
