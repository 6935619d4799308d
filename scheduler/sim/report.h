// podsim reports: percentiles, the JSON object keyed by policy, the side-by-side table and the
// utilization time series.
//
// Pure formatting; thread-safe.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "scheduler/sim/simulator.h"

namespace podsched::sim {

// The p-th percentile (0..100, nearest rank) of `values`; 0 for none.
double Percentile(std::vector<double> values, double p);
double Mean(const std::vector<double>& values);

// {"<policy>": {"jobs":..., "jct_mean_s":..., ..., "classes": {"on_demand": {...}, ...}}, ...}
std::string ResultsJson(const std::vector<SimResult>& results);
// One column per policy; rows overall and per class.
void PrintTable(const std::vector<SimResult>& results, std::ostream& out);
// policy,t_s,utilization,queued,running
void WriteTimeseriesCsv(const std::vector<SimResult>& results, std::ostream& out);

}  // namespace podsched::sim
