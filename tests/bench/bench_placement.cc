// bench_placement: how fast the placement policies decide, and how well they pack.
//
//   bench_placement [--requests N] [--quick] [--seed S]
//
// 1. Latency: Choose() for every slice type on an empty, a half-full and a fragmented v2 and v3
//    pod, per policy: median and p99 in microseconds, with the pod's index of free hosts built
//    and right after a change (building it included; see Measure).
// 2. Packing: a seeded stream of slice requests (Poisson arrivals, exponential lifetimes, small
//    slices more frequent) through a FIFO queue on a v3 pod, once per policy. The head of the
//    queue waits while it cannot be placed (no backfilling), so every placement that fragments
//    the pod shows up as waiting. Reported per policy: time-weighted mean utilization, and the
//    requests that had to wait although enough hosts were free ("blocked").
// Headline figures are printed as `FIGURE <name> <value> <unit>` lines.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "pod/placement.h"

namespace podsched::pod {
namespace {

struct Options {
  int requests = 10'000;
  bool quick = false;
  uint64_t seed = 42;
};

// ---------------------------------------------------------------------------------------------
// Pods in three states, built deterministically from a seed with first-fit (so that both
// policies are timed on identical pods).

Pod HalfFull(Generation g, uint64_t seed) {
  Pod pod = Pod::Full("half", g);
  const std::vector<AcceleratorType> types = ValidTypes(g, pod.host_rows(), pod.host_cols());
  auto ff = MakePlacementPolicy("first-fit").value();
  std::mt19937_64 rng(seed);
  int64_t id = 1;
  while (pod.Utilization() < 0.5) {
    const AcceleratorType& t = types[rng() % std::min<size_t>(types.size(), 4)];
    if (auto p = ff->Choose(pod, t)) {
      (void)pod.Allocate(AllocationId(id++), *p);
    }
  }
  return pod;
}

// Fill with random small slices at random legal positions, then release every other one and
// fail a few hosts: many holes, none large.
Pod Fragmented(Generation g, uint64_t seed) {
  Pod pod = Pod::Full("fragmented", g);
  const std::vector<AcceleratorType> types = ValidTypes(g, pod.host_rows(), pod.host_cols());
  std::mt19937_64 rng(seed);
  int64_t id = 1;
  for (int misses = 0; misses < 50;) {
    const AcceleratorType& t = types[rng() % 3];
    const std::vector<Placement> legal = pod.LegalPlacements(t.shape());
    if (legal.empty()) {
      ++misses;
      continue;
    }
    (void)pod.Allocate(AllocationId(id++), legal[rng() % legal.size()]);
  }
  for (int64_t i = 1; i < id; i += 2) (void)pod.Release(AllocationId(i));
  for (int i = 0; i < pod.num_hosts() / 32; ++i) {
    (void)pod.MarkUnhealthy(HostId(static_cast<int>(rng() % pod.num_hosts())));
  }
  return pod;
}

struct Latency {
  double median_us = 0;
  double p99_us = 0;
};

// Times Choose() `reps` times. The pod keeps an index of its free hosts (pod/free_index.h), built
// by the first query after a change, and best-fit remembers its answer per type in it. Every call
// is preceded by a change of the pod (a host's draining flag set to what it already is: the same
// hosts, a new index), so that nothing is remembered. With `after_change` the time includes
// building the index, as for the first decision after a job starts or ends. Without, the index is
// built (by a LargestPlaceableType query, not timed) but this type is not yet scored: what a
// decision for another type costs on a pod that did not change since the last.
Latency Measure(const PlacementPolicy& policy, Pod pod, const AcceleratorType& type, int reps,
                bool after_change) {
  std::vector<double> us;
  us.reserve(static_cast<size_t>(reps));
  // Written after every call so that the compiler cannot drop the calls being timed.
  [[maybe_unused]] volatile int sink = 0;
  const HostId touched(0);
  for (int i = 0; i < reps; ++i) {
    (void)pod.SetDraining(touched, pod.host(touched).draining);
    if (!after_change) sink = pod.LargestPlaceableType().has_value() ? 1 : 0;
    const auto start = std::chrono::steady_clock::now();
    const std::optional<Placement> p = policy.Choose(pod, type);
    const auto end = std::chrono::steady_clock::now();
    sink = p ? p->origin.row : -1;
    us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
  }
  std::sort(us.begin(), us.end());
  const auto at = [&us](double q) {
    return us[std::min(us.size() - 1, static_cast<size_t>(q * static_cast<double>(us.size())))];
  };
  return {at(0.5), at(0.99)};
}

void LatencySection(const Options& opt) {
  const int reps = opt.quick ? 20 : 400;
  std::printf("== placement decision latency (us), %d decisions per cell\n", reps);
  std::printf("%-4s %-11s %-10s %-9s %10s %10s %14s %14s %10s\n", "gen", "pod", "policy", "type",
              "median", "p99", "changed-median", "changed-p99", "placeable");
  for (Generation g : {Generation::kV2, Generation::kV3}) {
    const Pod empty = Pod::Full("empty", g);
    const Pod half = HalfFull(g, opt.seed);
    const Pod frag = Fragmented(g, opt.seed);
    for (const auto& [label, pod] : {std::pair<const char*, const Pod*>{"empty", &empty},
                                     {"half-full", &half},
                                     {"fragmented", &frag}}) {
      for (std::string_view name : PlacementPolicyNames()) {
        auto policy = MakePlacementPolicy(name).value();
        double worst_p99 = 0, worst_p99_changed = 0;
        for (const AcceleratorType& t : ValidTypes(g, pod->host_rows(), pod->host_cols())) {
          const Latency l = Measure(*policy, *pod, t, reps, false);
          const Latency changed = Measure(*policy, *pod, t, reps, true);
          worst_p99 = std::max(worst_p99, l.p99_us);
          worst_p99_changed = std::max(worst_p99_changed, changed.p99_us);
          std::printf("%-4s %-11s %-10s %-9s %10.2f %10.2f %14.2f %14.2f %10s\n",
                      std::string(SpecOf(g).name).c_str(), label, policy->name().data(),
                      t.ToString().c_str(), l.median_us, l.p99_us, changed.median_us,
                      changed.p99_us, policy->Choose(*pod, t) ? "yes" : "no");
        }
        if (g == Generation::kV3 && std::string_view(label) == "fragmented") {
          std::string fig = "placement_p99_v3_fragmented";
          if (name == "first-fit") fig += "_first_fit";
          std::printf("FIGURE %s %.2f us\n", fig.c_str(), worst_p99);
          std::printf("FIGURE %s_after_change %.2f us\n", fig.c_str(), worst_p99_changed);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Packing: a discrete-event simulation of a FIFO queue in front of one v3 pod.

struct Request {
  double arrival = 0;
  double lifetime = 0;
  AcceleratorType type;
};

std::vector<Request> MakeStream(int n, uint64_t seed, const Pod& pod) {
  const std::vector<AcceleratorType> all =
      ValidTypes(pod.generation(), pod.host_rows(), pod.host_cols());
  // Types up to half the pod; small ones most frequent (weight 1/sqrt(hosts)).
  std::vector<AcceleratorType> types;
  std::vector<double> weights;
  for (const AcceleratorType& t : all) {
    if (t.hosts() * 2 > pod.num_hosts()) continue;
    types.push_back(t);
    weights.push_back(1.0 / std::sqrt(static_cast<double>(t.hosts())));
  }
  double mean_hosts = 0, sum_w = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    mean_hosts += weights[i] * types[i].hosts();
    sum_w += weights[i];
  }
  mean_hosts /= sum_w;
  // Offered load slightly above capacity so that a queue forms and packing decides throughput.
  const double mean_lifetime = 1.0;
  const double offered_load = 1.1;
  const double arrival_rate = offered_load * pod.num_hosts() / (mean_hosts * mean_lifetime);
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(arrival_rate), life(1.0 / mean_lifetime);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  std::vector<Request> out;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += gap(rng);
    out.push_back({t, life(rng), types[pick(rng)]});
  }
  return out;
}

struct PackingResult {
  double mean_utilization = 0;
  int blocked = 0;  // waited at the head although enough hosts were free
  int waited = 0;   // waited at all
  double mean_fragmentation = 0;
};

PackingResult Pack(const PlacementPolicy& policy, Pod pod, const std::vector<Request>& stream) {
  struct Departure {
    double time;
    AllocationId id;
    bool operator>(const Departure& o) const { return time > o.time; }
  };
  std::priority_queue<Departure, std::vector<Departure>, std::greater<>> running;
  std::deque<size_t> queue;
  std::vector<char> blocked(stream.size(), 0), waited(stream.size(), 0);
  PackingResult r;
  double now = 0, busy_integral = 0, frag_integral = 0;
  const double end = stream.back().arrival;
  size_t next = 0;
  int64_t next_id = 1;
  while (next < stream.size()) {
    // Next event: a departure or an arrival, departures first on ties.
    double t = stream[next].arrival;
    const bool departure = !running.empty() && running.top().time <= t;
    if (departure) t = running.top().time;
    busy_integral += pod.Utilization() * (t - now);
    frag_integral += pod.Fragmentation() * (t - now);
    now = t;
    if (departure) {
      (void)pod.Release(running.top().id);
      running.pop();
    } else {
      queue.push_back(next++);
    }
    while (!queue.empty()) {
      const Request& req = stream[queue.front()];
      const std::optional<Placement> p = policy.Choose(pod, req.type);
      if (!p) {
        waited[queue.front()] = 1;
        if (pod.AvailableHosts() >= req.type.hosts()) blocked[queue.front()] = 1;
        break;
      }
      const AllocationId id(next_id++);
      (void)pod.Allocate(id, *p);
      running.push({now + req.lifetime, id});
      queue.pop_front();
    }
  }
  r.mean_utilization = busy_integral / end;
  r.mean_fragmentation = frag_integral / end;
  for (size_t i = 0; i < stream.size(); ++i) {
    r.blocked += blocked[i];
    r.waited += waited[i];
  }
  return r;
}

void PackingSection(const Options& opt) {
  const Pod pod = Pod::Full("packing", Generation::kV3);
  const std::vector<Request> stream = MakeStream(opt.requests, opt.seed, pod);
  std::printf("\n== packing: %d requests on a v3 pod (16x16 hosts), FIFO, seed %llu\n",
              opt.requests, static_cast<unsigned long long>(opt.seed));
  std::printf(
      "   types v3-8..v3-1024 weighted 1/sqrt(hosts), Poisson arrivals at 1.1x capacity,\n"
      "   exponential lifetimes; blocked = waited at the head with enough free hosts\n");
  std::printf("%-10s %12s %10s %10s %14s\n", "policy", "utilization", "waited", "blocked",
              "fragmentation");
  PackingResult results[2];
  int i = 0;
  for (std::string_view name : PlacementPolicyNames()) {
    auto policy = MakePlacementPolicy(name).value();
    const PackingResult r = Pack(*policy, pod, stream);
    std::printf("%-10s %12.4f %10d %10d %14.4f\n", policy->name().data(), r.mean_utilization,
                r.waited, r.blocked, r.mean_fragmentation);
    results[i++] = r;
  }
  const PackingResult& ff = results[0];
  const PackingResult& bf = results[1];
  std::printf("FIGURE blocked_first_fit %d requests\n", ff.blocked);
  std::printf("FIGURE blocked_best_fit %d requests\n", bf.blocked);
  std::printf("FIGURE blocked_ratio_best_over_first %.3f ratio\n",
              ff.blocked > 0 ? static_cast<double>(bf.blocked) / ff.blocked : 0.0);
  std::printf("FIGURE utilization_first_fit %.4f fraction\n", ff.mean_utilization);
  std::printf("FIGURE utilization_best_fit %.4f fraction\n", bf.mean_utilization);
}

int Usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--requests N] [--quick] [--seed S]\n", argv0);
  return 2;
}

}  // namespace
}  // namespace podsched::pod

int main(int argc, char** argv) {
  podsched::pod::Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      opt.quick = true;
    } else if ((arg == "--requests" || arg == "--seed") && i + 1 < argc) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(argv[++i], &end, 10);
      if (*end != '\0' || v == 0) return podsched::pod::Usage(argv[0]);
      if (arg == "--requests") {
        opt.requests = static_cast<int>(v);
      } else {
        opt.seed = v;
      }
    } else {
      return podsched::pod::Usage(argv[0]);
    }
  }
  podsched::pod::LatencySection(opt);
  podsched::pod::PackingSection(opt);
  return 0;
}
