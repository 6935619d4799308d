#include "scheduler/sim/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <map>
#include <numeric>

namespace podsched::sim {
namespace {

nlohmann::json ClassJson(const ClassMetrics& c) {
  return {
      {"jobs", c.jobs},
      {"completed", c.completed},
      {"jct_mean_s", Mean(c.jct_s)},
      {"jct_p50_s", Percentile(c.jct_s, 50)},
      {"jct_p95_s", Percentile(c.jct_s, 95)},
      {"jct_p99_s", Percentile(c.jct_s, 99)},
      {"wait_mean_s", Mean(c.wait_s)},
      {"wait_p50_s", Percentile(c.wait_s, 50)},
      {"wait_p99_s", Percentile(c.wait_s, 99)},
      {"preemptions", c.preemptions},
      {"work_lost_core_h", c.work_lost_core_h},
      {"useful_core_h", c.useful_core_h},
      {"held_core_h", c.held_core_h},
      {"goodput", c.held_core_h > 0 ? c.useful_core_h / c.held_core_h : 0.0},
      {"cost_usd", c.cost_usd},
  };
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Seconds as "1234 s" or "3.2 h" for the table.
std::string Dur(double s) {
  if (s < 3600) return Fixed(s, 0) + " s";
  return Fixed(s / 3600, 2) + " h";
}

}  // namespace

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  const size_t rank = static_cast<size_t>(
      std::clamp(std::ceil(p / 100.0 * static_cast<double>(values.size())), 1.0,
                 static_cast<double>(values.size())));
  std::nth_element(values.begin(), values.begin() + static_cast<long>(rank - 1), values.end());
  return values[rank - 1];
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

namespace {

nlohmann::json OutcomesJson(const std::vector<JobOutcome>& outcomes) {
  nlohmann::json out = nlohmann::json::array();
  for (const JobOutcome& o : outcomes) {
    out.push_back({{"trace_index", o.trace_index},
                   {"user", o.user},
                   {"accelerator", o.accelerator},
                   {"preemptible", o.preemptible},
                   {"reason", o.reason}});
  }
  return out;
}

// The most common reasons, most common first, each with its count and one job as an example.
void PrintReasons(const std::string& what, const std::vector<JobOutcome>& outcomes,
                  std::ostream& out) {
  if (outcomes.empty()) return;
  std::map<std::string, std::pair<int64_t, const JobOutcome*>> by_reason;
  for (const JobOutcome& o : outcomes) {
    auto& [count, example] = by_reason[o.reason];
    if (count++ == 0) example = &o;
  }
  std::vector<std::pair<int64_t, const JobOutcome*>> sorted;
  for (const auto& [reason, entry] : by_reason) sorted.push_back(entry);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  out << "  " << what << ": " << outcomes.size() << "\n";
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < sorted.size() && i < kShown; ++i) {
    const JobOutcome& o = *sorted[i].second;
    out << "    " << sorted[i].first << " x " << o.reason << " (e.g. row " << o.trace_index
        << ": " << o.user << " " << o.accelerator
        << (o.preemptible ? " preemptible" : " on-demand") << ")\n";
  }
  if (sorted.size() > kShown) out << "    ... and " << sorted.size() - kShown << " other reasons\n";
}

}  // namespace

std::string ResultsJson(const std::vector<SimResult>& results) {
  nlohmann::json out = nlohmann::json::object();
  for (const SimResult& r : results) {
    nlohmann::json j = ClassJson(r.overall);
    j["jobs"] = r.jobs;
    j["rejected"] = r.rejected;
    j["unfinished"] = r.unfinished;
    j["failed"] = r.failed;
    j["cancelled"] = r.cancelled;
    j["utilization"] = r.utilization;
    j["makespan_s"] = r.makespan_s;
    j["preemptions"] = r.preemptions;
    j["preemptions_by_core"] = r.preemptions;
    j["job_interruptions"] = r.overall.preemptions;
    j["defrag_moves"] = r.defrag_moves;
    j["defrag_lost_core_h"] = r.defrag_lost_core_h;
    if (r.egress_modelled) {  // (absent otherwise: the same JSON as before for the same seed)
      j["egress_gib"] = r.overall.egress_gib;
      j["egress_usd"] = r.overall.egress_usd;
    }
    j["events"] = r.events;
    j["passes"] = r.passes;
    j["stale_reports"] = r.stale_reports;
    j["wall_s"] = r.wall_s;
    j["events_per_s"] = r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s : 0.0;
    j["rejected_jobs"] = OutcomesJson(r.rejected_jobs);
    j["unfinished_jobs"] = OutcomesJson(r.unfinished_jobs);
    j["cancelled_jobs"] = OutcomesJson(r.cancelled_jobs);
    j["classes"] = {{"on_demand", ClassJson(r.on_demand)},
                    {"preemptible", ClassJson(r.preemptible)}};
    if (r.egress_modelled) {
      for (const auto& [name, c] : {std::pair<const char*, const ClassMetrics*>{"on_demand", &r.on_demand},
                                    {"preemptible", &r.preemptible}}) {
        j["classes"][name]["egress_gib"] = c->egress_gib;
        j["classes"][name]["egress_usd"] = c->egress_usd;
      }
    }
    out[r.profile] = std::move(j);
  }
  return out.dump(2);
}

void PrintTable(const std::vector<SimResult>& results, std::ostream& out) {
  struct Row {
    std::string label;
    std::string (*value)(const SimResult&, const ClassMetrics&);
  };
  using R = const SimResult&;
  using C = const ClassMetrics&;
  const Row per_class[] = {
      {"jobs (completed)", [](R, C c) { return std::to_string(c.jobs) + " (" + std::to_string(c.completed) + ")"; }},
      {"JCT mean", [](R, C c) { return Dur(Mean(c.jct_s)); }},
      {"JCT p50", [](R, C c) { return Dur(Percentile(c.jct_s, 50)); }},
      {"JCT p95", [](R, C c) { return Dur(Percentile(c.jct_s, 95)); }},
      {"JCT p99", [](R, C c) { return Dur(Percentile(c.jct_s, 99)); }},
      {"queueing delay mean", [](R, C c) { return Dur(Mean(c.wait_s)); }},
      {"queueing delay p99", [](R, C c) { return Dur(Percentile(c.wait_s, 99)); }},
      {"interruptions", [](R, C c) { return std::to_string(c.preemptions); }},
      {"work lost (core-h)", [](R, C c) { return Fixed(c.work_lost_core_h, 1); }},
      {"goodput", [](R, C c) { return Fixed(c.held_core_h > 0 ? c.useful_core_h / c.held_core_h : 0, 3); }},
      {"cost (USD)", [](R, C c) { return Fixed(c.cost_usd, 0); }},
  };
  const Row overall_only[] = {
      {"utilization", [](R r, C) { return Fixed(r.utilization, 3); }},
      {"makespan", [](R r, C) { return Dur(r.makespan_s); }},
      {"preemptions issued", [](R r, C) { return std::to_string(r.preemptions); }},
      {"defrag moves (core-h)", [](R r, C) { return std::to_string(r.defrag_moves) + " (" + Fixed(r.defrag_lost_core_h, 1) + ")"; }},
      {"rejected / unfinished", [](R r, C) { return std::to_string(r.rejected) + " / " + std::to_string(r.unfinished); }},
      {"events", [](R r, C) { return std::to_string(r.events); }},
      {"wall time", [](R r, C) { return Fixed(r.wall_s, 2) + " s"; }},
  };
  const Row egress_rows[] = {
      {"egress (GiB, USD)", [](R, C c) { return Fixed(c.egress_gib, 1) + ", " + Fixed(c.egress_usd, 2); }},
  };
  auto line = [&](const std::string& label, auto cell) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%-24s", label.c_str());
    out << buf;
    for (const SimResult& r : results) {
      std::snprintf(buf, sizeof buf, " %20s", cell(r).c_str());
      out << buf;
    }
    out << '\n';
  };
  line("policy", [](R r) { return r.profile; });
  out << "-- overall\n";
  for (const Row& row : overall_only) line(row.label, [&](R r) { return row.value(r, r.overall); });
  const bool egress = !results.empty() && results.front().egress_modelled;
  auto rows = [&](auto metrics) {
    for (const Row& row : per_class) line(row.label, [&](R r) { return row.value(r, metrics(r)); });
    if (!egress) return;
    for (const Row& row : egress_rows) line(row.label, [&](R r) { return row.value(r, metrics(r)); });
  };
  rows([](R r) -> C { return r.overall; });
  out << "-- on-demand\n";
  rows([](R r) -> C { return r.on_demand; });
  out << "-- preemptible\n";
  rows([](R r) -> C { return r.preemptible; });
  for (const SimResult& r : results) {
    if (r.rejected_jobs.empty() && r.unfinished_jobs.empty() && r.cancelled_jobs.empty()) {
      continue;
    }
    out << "-- " << r.profile << ": jobs not run to the end\n";
    PrintReasons("rejected at submit", r.rejected_jobs, out);
    PrintReasons("cancelled (dependency never satisfied)", r.cancelled_jobs, out);
    PrintReasons("unfinished", r.unfinished_jobs, out);
  }
}

void WriteTimeseriesCsv(const std::vector<SimResult>& results, std::ostream& out) {
  out << "policy,t_s,utilization,queued,running\n";
  for (const SimResult& r : results) {
    for (const Sample& s : r.timeseries) {
      out << r.profile << ',' << s.t_s << ',' << s.utilization << ',' << s.queued << ','
          << s.running << '\n';
    }
  }
}

}  // namespace podsched::sim
