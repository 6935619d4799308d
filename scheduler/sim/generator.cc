#include "scheduler/sim/generator.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <map>
#include <string>

#include "pod/accelerator.h"

namespace podsched::sim {
namespace {

struct SliceWeight {
  const char* type;
  int cores;
  double weight;
};
constexpr SliceWeight kSlices[] = {
    {"v2-8", 8, 0.50}, {"v2-32", 32, 0.30}, {"v2-128", 128, 0.15},
    {"v2-256", 256, 0.04}, {"v2-512", 512, 0.01}};

// gangs: most jobs small, from every user; 15% large gangs from the first fifth of the users.
constexpr SliceWeight kSmall[] = {{"v2-8", 8, 0.8}, {"v2-32", 32, 0.2}};
constexpr SliceWeight kGangs[] = {{"v2-128", 128, 0.6}, {"v2-256", 256, 0.3}, {"v2-512", 512, 0.1}};
constexpr double kGangFraction = 0.15;

// frag: on-demand blocks among churning preemptible v2-8 jobs a fifth as long as the others.
constexpr SliceWeight kFragOnDemand[] = {{"v2-32", 32, 0.7}, {"v2-128", 128, 0.3}};
constexpr double kFragOnDemandFraction = 0.0075;
constexpr double kFragSmallScale = 8.0 / 60;  // median 8 min: mostly inside the minimum runtime
constexpr double kFragSmallMaxSeconds = 3600;

template <size_t N>
double MeanCores(const SliceWeight (&table)[N]) {
  double cores = 0;
  for (const SliceWeight& s : table) cores += s.cores * s.weight;
  return cores;
}

template <size_t N>
const char* Pick(const SliceWeight (&table)[N], double pick) {
  for (const SliceWeight& s : table) {
    if (pick < s.weight) return s.type;
    pick -= s.weight;
  }
  return table[0].type;
}

constexpr double kMedianSeconds = 3600;
constexpr double kSigma = 1.0;
constexpr double kMaxSeconds = 72 * 3600;

}  // namespace

Result<Mix> ParseMix(std::string_view name) {
  if (name == "grant") return Mix::kGrant;
  if (name == "slices") return Mix::kSlices;
  if (name == "gangs") return Mix::kGangs;
  if (name == "bursts") return Mix::kBursts;
  if (name == "frag") return Mix::kFrag;
  return InvalidArgument(std::string(name) +
                         " is not a trace mix; valid: grant, slices, gangs, bursts, frag");
}

namespace {

// bursts: see generator.h. Submissions come in groups (one user's sweep within a minute) or
// alone; a group of gangs is small, a group of small jobs large.
std::vector<TraceJob> GenerateBursts(const GenOptions& options) {
  constexpr double kBurstMedian = 2 * 3600, kBurstSigma = 1.5, kBurstMax = 14 * 86400.0;
  constexpr double kGangShare = 0.2;  // of groups and single submissions
  std::mt19937_64 rng(options.seed);
  std::lognormal_distribution<double> duration(std::log(kBurstMedian), kBurstSigma);
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<int> user(0, std::max(1, options.users) - 1);
  std::uniform_int_distribution<int> small_group(10, 100), gang_group(2, 8);
  const double mean_duration = kBurstMedian * std::exp(kBurstSigma * kBurstSigma / 2);
  std::exponential_distribution<double> gap(1.0);
  std::vector<TraceJob> jobs;
  double t = 0;
  while (static_cast<int64_t>(jobs.size()) < options.jobs) {
    const bool gang = unit(rng) < kGangShare;
    const bool group = unit(rng) < 0.6;
    const std::string who = "user" + std::to_string(user(rng));
    const char* type = gang ? Pick(kGangs, unit(rng)) : Pick(kSmall, unit(rng));
    const bool preemptible = unit(rng) < 0.5;
    int64_t n = group ? (gang ? gang_group(rng) : small_group(rng)) : 1;
    n = std::min<int64_t>(n, options.jobs - static_cast<int64_t>(jobs.size()));
    for (int64_t k = 0; k < n; ++k) {
      TraceJob job;
      job.submit_s = std::round(t + (k == 0 ? 0 : unit(rng) * 60));
      job.user = who;
      job.accelerator = type;
      job.preemptible = preemptible;
      job.duration_s = std::round(std::clamp(duration(rng), 60.0, kBurstMax));
      job.checkpoint_interval_s = 1800;
      jobs.push_back(std::move(job));
    }
    // The next submission comes when this one's expected core-seconds are offered at `load`.
    const double cores = pod::AcceleratorType::Parse(type)->tensor_cores();
    t += gap(rng) * static_cast<double>(n) * cores * mean_duration / (options.load * 512.0);
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  return jobs;
}

}  // namespace

namespace {

std::vector<TraceJob> GenerateSingle(const GenOptions& options);

}  // namespace

std::vector<TraceJob> Generate(const GenOptions& options) {
  std::vector<TraceJob> jobs =
      options.mix == Mix::kBursts ? GenerateBursts(options) : GenerateSingle(options);
  if (options.multislice > 0) {
    std::mt19937_64 rng(options.seed ^ 0x6d756c7469736cULL);  // apart from the trace's own draws
    std::uniform_real_distribution<double> unit(0, 1);
    for (TraceJob& job : jobs) {
      const bool pick = unit(rng) < options.multislice;
      const int slices = 2 << (rng() % 3);
      if (pick && job.array_id == 0) job.slices = slices;  // an array's tasks share one spec
    }
  }
  return jobs;
}

namespace {

std::vector<TraceJob> GenerateSingle(const GenOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::lognormal_distribution<double> duration(std::log(kMedianSeconds), kSigma);
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<int> user(0, std::max(1, options.users) - 1);

  // Mean offered core-seconds per job sets the arrival rate for the requested load.
  const double mean_duration = kMedianSeconds * std::exp(kSigma * kSigma / 2);
  double mean_cores = 8;
  if (options.mix == Mix::kSlices) mean_cores = MeanCores(kSlices);
  if (options.mix == Mix::kGangs) {
    mean_cores = kGangFraction * MeanCores(kGangs) + (1 - kGangFraction) * MeanCores(kSmall);
  }
  const int gang_users = std::max(1, options.users / 5);
  std::uniform_int_distribution<int> gang_user(0, gang_users - 1);
  double mean_core_seconds = mean_cores * mean_duration;
  if (options.mix == Mix::kFrag) {
    mean_core_seconds = (kFragOnDemandFraction * MeanCores(kFragOnDemand) +
                         (1 - kFragOnDemandFraction) * 8 * kFragSmallScale) *
                        mean_duration;
  }
  const double interarrival = mean_core_seconds / (options.load * 512.0);
  std::exponential_distribution<double> gap(1.0 / interarrival);

  const bool sweeps = options.arrays > 0 || options.chains > 0 || options.fails > 0;
  std::uniform_int_distribution<int> array_size(2, 16);
  std::map<std::string, int64_t> last_of_user;  // the trace id of each user's last submission
  int64_t next_id = 1;
  std::vector<TraceJob> jobs;
  jobs.reserve(static_cast<size_t>(std::max<int64_t>(0, options.jobs)));
  double t = 0;
  for (int64_t i = 0; i < options.jobs;) {
    TraceJob job;
    job.submit_s = std::round(t);
    job.user = "user" + std::to_string(user(rng));
    job.duration_s = std::round(std::clamp(duration(rng), 60.0, kMaxSeconds));
    job.checkpoint_interval_s = 1800;
    if (options.mix == Mix::kGrant) {
      job.accelerator = "v2-8";
      job.preemptible = unit(rng) < 0.75;
    } else if (options.mix == Mix::kSlices) {
      job.accelerator = Pick(kSlices, unit(rng));
      job.preemptible = unit(rng) < 0.5;
      job.priority = unit(rng) < 0.1 ? 1 : 0;
    } else if (options.mix == Mix::kFrag) {
      if (unit(rng) < kFragOnDemandFraction) {
        job.accelerator = Pick(kFragOnDemand, unit(rng));
      } else {
        job.accelerator = "v2-8";
        job.preemptible = true;
        job.duration_s = std::round(std::clamp(job.duration_s * kFragSmallScale, 60.0,
                                               kFragSmallMaxSeconds));
      }
    } else if (unit(rng) < kGangFraction) {
      job.user = "user" + std::to_string(gang_user(rng));
      job.accelerator = Pick(kGangs, unit(rng));
      job.preemptible = unit(rng) < 0.3;
    } else {
      job.accelerator = Pick(kSmall, unit(rng));
      job.preemptible = unit(rng) < 0.3;
    }
    if (!sweeps) {
      t += gap(rng);
      jobs.push_back(std::move(job));
      ++i;
      continue;
    }
    // The extra draws happen only with sweeps on, so plain traces stay what they were.
    const int64_t id = next_id++;
    if (unit(rng) < options.chains) {
      if (auto prev = last_of_user.find(job.user); prev != last_of_user.end()) {
        job.dependencies.push_back({core::DependencyKind::kAfterOk, JobId(prev->second), {}});
      }
    }
    last_of_user[job.user] = id;
    int tasks = 1;
    if (unit(rng) < options.arrays) {
      tasks = static_cast<int>(std::min<int64_t>(array_size(rng), options.jobs - i));
      job.array_id = id;
      job.array_throttle = unit(rng) < 0.5 ? 4 : 0;
    } else {
      job.job_id = id;
    }
    for (int k = 0; k < tasks; ++k, ++i) {
      TraceJob task = job;
      task.array_index = job.array_id > 0 ? k : 0;
      if (k > 0) task.duration_s = std::round(std::clamp(duration(rng), 60.0, kMaxSeconds));
      task.fails = unit(rng) < options.fails;
      jobs.push_back(std::move(task));
    }
    // An array offers `tasks` jobs at once: the next submission comes that much later, so that
    // `load` means the same with and without arrays.
    t += gap(rng) * tasks;
  }
  return jobs;
}

}  // namespace

}  // namespace podsched::sim
