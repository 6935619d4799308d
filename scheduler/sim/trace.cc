#include "scheduler/sim/trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <optional>
#include <chrono>
#include <ctime>
#include <map>
#include <sstream>

#include <queue>
#include <set>
#include <tuple>

#include "common/hash.h"
#include "pod/accelerator.h"
#include "pod/cost.h"
#include "scheduler/core/dependency.h"
#include "scheduler/core/spec.h"

namespace podsched::sim {
namespace {

// std::to_string(double), that is printf's "%f", without its vsnprintf (a quarter of reading a
// Philly row): to_chars with a precision prints as printf's "%.*f" does, to the byte.
std::string Fixed6(double value) {
  char text[400];  // "%f" of the largest double has 309 digits before the point
  const auto [end, error] =
      std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, 6);
  if (error != std::errc()) return std::to_string(value);
  return std::string(text, end);
}

// The fields between commas, each without one trailing '\r'; none for an empty line. (A stream
// per line was a third of reading a trace.)
std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  if (line.empty()) return out;
  std::string_view rest = line;
  while (true) {
    const size_t comma = rest.find(',');
    std::string_view field = rest.substr(0, comma);
    if (!field.empty() && field.back() == '\r') field.remove_suffix(1);
    out.emplace_back(field);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

Result<double> ParseNumber(const std::string& text, std::string_view column, int line) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) {
    return InvalidArgument("line " + std::to_string(line) + ": " + std::string(column) + " is '" +
                           text + "', not a number");
  }
  return value;
}

// splitmix64: a seeded, well-mixed hash of the row number.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The digits of `text` at [at, at + n) as a number, or -1 if any is not a digit.
int Digits(const std::string& text, size_t at, size_t n) {
  int value = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

Result<int64_t> ParseTimestamp(const std::string& text, int line) {
  std::tm tm{};
  // Exactly "YYYY-MM-DD HH:MM:SS" with every field in std::get_time's range, as every row of the
  // public trace is, read directly; anything else goes to std::get_time, which decides (a stream
  // per row was a third of reading a trace).
  if (text.size() == 19 && text[4] == '-' && text[7] == '-' && text[10] == ' ' && text[13] == ':' &&
      text[16] == ':') {
    const int year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
    const int hour = Digits(text, 11, 2), minute = Digits(text, 14, 2);
    const int second = Digits(text, 17, 2);
    if (year >= 0 && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour >= 0 &&
        hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 60) {
      tm.tm_year = year - 1900;
      tm.tm_mon = month - 1;
      tm.tm_mday = day;
      tm.tm_hour = hour;
      tm.tm_min = minute;
      tm.tm_sec = second;
      return static_cast<int64_t>(timegm(&tm));
    }
  }
  std::istringstream ss(text);
  ss >> std::get_time(&tm, "%Y-%m-%d %H:%M:%S");
  if (ss.fail()) {
    return InvalidArgument("line " + std::to_string(line) + ": timestamp '" + text +
                           "' is not YYYY-MM-DD HH:MM:SS");
  }
  return static_cast<int64_t>(timegm(&tm));
}

// What the rows so far define, for the sweep columns of later rows to refer to.
struct TraceIds {
  struct Array {
    size_t first;  // index of the array's first row (fields every task shares)
    std::set<int> indices;
  };
  std::map<int64_t, double> jobs;  // job_id -> submit time
  std::map<int64_t, Array> arrays;
};

Status Bad(int line, const std::string& what) {
  return Status(StatusCode::kInvalidArgument, "line " + std::to_string(line) + ": " + what);
}

// Checks the sweep columns of the last row of `rows` (file line `line`) against the rows before
// it and records its ids.
Status CheckSweep(const std::vector<TraceJob>& rows, int line, TraceIds& ids) {
  const TraceJob& job = rows.back();
  if (job.job_id < 0 || job.array_id < 0 || job.array_index < 0 || job.array_throttle < 0) {
    return Bad(line, "job_id, array_id, array_index and array_throttle must be >= 0");
  }
  if (job.job_id > 0 && job.array_id > 0) {
    return Bad(line, "an array row is named by array_id and array_index; leave job_id empty");
  }
  const int64_t own = job.job_id > 0 ? job.job_id : job.array_id;
  for (const core::Dependency& dep : job.dependencies) {
    const std::string name = core::FormatDependency(dep);
    if (dep.job.value() == own) return Bad(line, name + " names the row's own job or array");
    double submitted = 0;
    if (auto a = ids.arrays.find(dep.job.value()); a != ids.arrays.end()) {
      if (dep.array_index && !a->second.indices.contains(*dep.array_index)) {
        return Bad(line, name + ": array " + std::to_string(dep.job.value()) +
                             " has no task " + std::to_string(*dep.array_index));
      }
      submitted = rows[a->second.first].submit_s;
    } else if (auto j = ids.jobs.find(dep.job.value()); j != ids.jobs.end() && !dep.array_index) {
      submitted = j->second;
    } else {
      return Bad(line, name + " names no row (job_id or array_id) submitted no later than it,"
                              " or the dependencies form a cycle");
    }
    if (submitted > job.submit_s) {
      return Bad(line, name + " is submitted after the row that depends on it");
    }
  }
  if (job.job_id > 0) {
    if (ids.jobs.contains(job.job_id) || ids.arrays.contains(job.job_id)) {
      return Bad(line, "job_id " + std::to_string(job.job_id) + " is used twice");
    }
    ids.jobs[job.job_id] = job.submit_s;
  }
  if (job.array_id > 0) {
    if (ids.jobs.contains(job.array_id)) {
      return Bad(line, "array_id " + std::to_string(job.array_id) + " is a job_id already");
    }
    auto [it, first] = ids.arrays.try_emplace(job.array_id, TraceIds::Array{rows.size() - 1, {}});
    const TraceJob& f = rows[it->second.first];
    if (!first && (f.submit_s != job.submit_s || f.user != job.user ||
                   f.accelerator != job.accelerator || f.preemptible != job.preemptible ||
                   f.priority != job.priority || f.array_throttle != job.array_throttle ||
                   f.dependencies != job.dependencies || f.slices != job.slices)) {
      return Bad(line, "the tasks of array " + std::to_string(job.array_id) +
                           " must share submit_time_s, user, accelerator, preemptible, priority,"
                           " array_throttle, dependency and slices");
    }
    if (!it->second.indices.insert(job.array_index).second) {
      return Bad(line, "array " + std::to_string(job.array_id) + " has task " +
                           std::to_string(job.array_index) + " twice");
    }
  }
  return Status::Ok();
}

// Times a replay can represent: the simulated clock counts microseconds in an int64, and a
// century is far beyond any real trace.
constexpr double kMaxTraceSeconds = 100 * 365 * 86400.0;

Status CheckTimes(const TraceJob& job, int line) {
  for (auto [name, value] : {std::pair{"submit time", job.submit_s},
                             std::pair{"duration", job.duration_s},
                             std::pair{"checkpoint interval", job.checkpoint_interval_s}}) {
    if (value > kMaxTraceSeconds) {
      char text[32];
      std::snprintf(text, sizeof text, "%.6g", value);
      return Bad(line, std::string(name) + " " + text +
                           " s is beyond what a replay can represent (100 years)");
    }
  }
  return Status::Ok();
}

// The order of rows in a file carries no meaning: the public Philly trace is distributed
// unsorted, and a replay must not depend on it. Rows are ordered by submit time, then by their
// content, so that any permutation of a file gives the same list (rows equal in every field are
// interchangeable). Within one submit time a dependency's target comes before the rows that
// depend on it; a cycle keeps the content order (CheckSweep then names the row).
std::vector<size_t> CanonicalOrder(const std::vector<TraceJob>& rows) {
  auto key = [&](size_t i) {
    const TraceJob& j = rows[i];
    return std::tie(j.submit_s, j.job_id, j.array_id, j.array_index, j.user, j.accelerator,
                    j.preemptible, j.duration_s, j.priority, j.checkpoint_interval_s,
                    j.array_throttle, j.fails, j.slices);
  };
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (key(a) != key(b)) return key(a) < key(b);
    return core::FormatDependencies(rows[a].dependencies) <
           core::FormatDependencies(rows[b].dependencies);
  });
  std::vector<size_t> out;
  out.reserve(order.size());
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    while (end < order.size() && rows[order[end]].submit_s == rows[order[begin]].submit_s) ++end;
    // Kahn's algorithm over the group [begin, end), always taking the ready row first in content
    // order. A row waits for every row of the group that carries an id it depends on (all the
    // tasks of an array).
    const size_t n = end - begin;
    auto row = [&](size_t k) -> const TraceJob& { return rows[order[begin + k]]; };
    std::map<int64_t, std::vector<size_t>> carrying;  // id -> group positions
    for (size_t k = 0; k < n; ++k) {
      const int64_t own = row(k).job_id > 0 ? row(k).job_id : row(k).array_id;
      if (own > 0) carrying[own].push_back(k);
    }
    std::vector<std::vector<size_t>> dependents(n);
    std::vector<size_t> waiting(n, 0);
    for (size_t k = 0; k < n; ++k) {
      std::set<int64_t> targets;
      for (const core::Dependency& d : row(k).dependencies) targets.insert(d.job.value());
      for (int64_t target : targets) {
        auto it = carrying.find(target);
        if (it == carrying.end()) continue;
        for (size_t t : it->second) {
          if (t == k) continue;  // the row's own id: CheckSweep reports it
          dependents[t].push_back(k);
          ++waiting[k];
        }
      }
    }
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
    for (size_t k = 0; k < n; ++k) {
      if (waiting[k] == 0) ready.push(k);
    }
    std::vector<bool> placed(n, false);
    while (!ready.empty()) {
      const size_t k = ready.top();
      ready.pop();
      placed[k] = true;
      out.push_back(order[begin + k]);
      for (size_t d : dependents[k]) {
        if (--waiting[d] == 0) ready.push(d);
      }
    }
    for (size_t k = 0; k < n; ++k) {  // a cycle: the rest in content order
      if (!placed[k]) out.push_back(order[begin + k]);
    }
    begin = end;
  }
  return out;
}

}  // namespace

Result<std::string> SmallestV2SliceFor(int cores) {
  for (const pod::AcceleratorType& t : pod::ValidTypes(pod::Generation::kV2, 8, 8)) {
    if (t.tensor_cores() >= cores) return t.ToString();
  }
  return InvalidArgument(std::to_string(cores) + " cores do not fit a v2 pod (512 cores)");
}

Result<Trace> ParsePodsimCsv(std::istream& in) {
  std::string line;
  if (!std::getline(in, line)) return InvalidArgument("empty trace: no header line");
  std::map<std::string, size_t> col;
  const std::vector<std::string> header = SplitCsv(line);
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* required : {"submit_time_s", "user", "accelerator", "preemptible"}) {
    if (!col.contains(required)) {
      return InvalidArgument(std::string("header has no ") + required +
                             " column; expected submit_time_s,user,accelerator,preemptible,"
                             "duration_s,priority,checkpoint_interval_s,steps,workload");
    }
  }
  Trace trace;
  TraceIds ids;
  std::vector<TraceJob> rows;
  std::vector<int> lines;  // the file line of each row, for errors
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> f = SplitCsv(line);
    auto get = [&](const char* name) -> std::string {
      auto it = col.find(name);
      return it != col.end() && it->second < f.size() ? f[it->second] : std::string();
    };
    auto number_of = [&](const char* name, double fallback) -> Result<double> {
      const std::string text = get(name);
      if (text.empty()) return fallback;
      return ParseNumber(text, name, number);
    };
    TraceJob job;
    auto submit = number_of("submit_time_s", -1);
    if (!submit) return std::unexpected(submit.error());
    job.submit_s = *submit;
    job.user = get("user");
    job.accelerator = get("accelerator");
    const std::string pre = get("preemptible");
    job.preemptible = pre == "1" || pre == "true";
    if (!(pre == "0" || pre == "1" || pre == "true" || pre == "false")) {
      return InvalidArgument("line " + std::to_string(number) + ": preemptible is '" + pre +
                             "'; use 0/1 or true/false");
    }
    auto duration = number_of("duration_s", -1);
    auto priority = number_of("priority", 0);
    auto interval = number_of("checkpoint_interval_s", 0);
    auto steps = number_of("steps", -1);
    for (const auto* r : {&duration, &priority, &interval, &steps}) {
      if (!*r) return std::unexpected(r->error());
    }
    // Checked before the conversion: a double beyond int's range does not convert (undefined).
    if (*priority != std::trunc(*priority) || std::abs(*priority) > 1e9) {
      return InvalidArgument("line " + std::to_string(number) + ": priority is '" +
                             get("priority") + "', not an integer up to 1e9");
    }
    job.priority = static_cast<int>(*priority);
    job.checkpoint_interval_s = *interval;
    job.duration_s = *duration;
    if (job.duration_s < 0 && *steps >= 0) {
      auto workload = pod::ReferenceWorkload(get("workload"));
      auto type = pod::AcceleratorType::Parse(job.accelerator);
      if (!workload) return std::unexpected(workload.error().WithContext("line " + std::to_string(number)));
      if (!type) return std::unexpected(type.error().WithContext("line " + std::to_string(number)));
      job.duration_s = *steps * pod::EstimateStep(*workload, *type).step_seconds();
    }
    if (job.submit_s < 0 || job.user.empty() || job.accelerator.empty() || job.duration_s <= 0 ||
        job.checkpoint_interval_s < 0) {
      return InvalidArgument("line " + std::to_string(number) +
                             ": needs submit_time_s >= 0, a user, an accelerator, and "
                             "duration_s > 0 (or steps and workload)");
    }
    if (Status s = CheckTimes(job, number); !s.ok()) return std::unexpected(s);
    auto job_id = number_of("job_id", 0);
    auto array_id = number_of("array_id", 0);
    auto array_index = number_of("array_index", 0);
    auto throttle = number_of("array_throttle", 0);
    for (const auto* r : {&job_id, &array_id, &array_index, &throttle}) {
      if (!*r) return std::unexpected(r->error());
      if (**r != std::floor(**r) || std::abs(**r) > core::kMaxArrayIndex * 1000.0) {
        return InvalidArgument("line " + std::to_string(number) +
                               ": job_id, array_id, array_index and array_throttle are integers");
      }
    }
    job.job_id = static_cast<int64_t>(*job_id);
    job.array_id = static_cast<int64_t>(*array_id);
    job.array_index = static_cast<int>(*array_index);
    job.array_throttle = static_cast<int>(*throttle);
    if (std::string deps = get("dependency"); !deps.empty()) {
      std::replace(deps.begin(), deps.end(), ';', ',');
      auto parsed = core::ParseDependencies(deps);
      if (!parsed) {
        return std::unexpected(parsed.error().WithContext("line " + std::to_string(number)));
      }
      job.dependencies = std::move(*parsed);
    }
    const std::string fails = get("fails");
    if (!(fails.empty() || fails == "0" || fails == "1")) {
      return InvalidArgument("line " + std::to_string(number) + ": fails is '" + fails +
                             "'; use 0 or 1");
    }
    job.fails = fails == "1";
    auto slices = number_of("slices", 1);
    if (!slices) return std::unexpected(slices.error());
    if (*slices != std::floor(*slices) || *slices < 1 || *slices > core::kMaxSlices) {
      return InvalidArgument("line " + std::to_string(number) + ": slices is '" + get("slices") +
                             "'; use an integer 1.." + std::to_string(core::kMaxSlices));
    }
    job.slices = static_cast<int>(*slices);
    rows.push_back(std::move(job));
    lines.push_back(number);
  }
  // Sweep columns refer to other rows: checked in the canonical order, where every target a row
  // may name comes before it, whatever the order of the file.
  trace.jobs.reserve(rows.size());
  for (size_t i : CanonicalOrder(rows)) {
    trace.jobs.push_back(std::move(rows[i]));
    if (Status s = CheckSweep(trace.jobs, lines[i], ids); !s.ok()) return std::unexpected(s);
  }
  return trace;
}

void WritePodsimCsv(const std::vector<TraceJob>& jobs, std::ostream& out) {
  // The sweep columns only when a job uses them: plain traces keep their plain header.
  const bool sweeps = std::any_of(jobs.begin(), jobs.end(), [](const TraceJob& j) {
    return j.job_id > 0 || j.array_id > 0 || !j.dependencies.empty() || j.fails;
  });
  const bool multislice =
      std::any_of(jobs.begin(), jobs.end(), [](const TraceJob& j) { return j.slices > 1; });
  out << "submit_time_s,user,accelerator,preemptible,duration_s,priority,checkpoint_interval_s";
  if (sweeps) out << ",job_id,array_id,array_index,array_throttle,dependency,fails";
  if (multislice) out << ",slices";
  out << '\n';
  out.precision(15);  // whole seconds beyond 10^6 must not turn into 1.23457e+06
  for (const TraceJob& j : jobs) {
    out << j.submit_s << ',' << j.user << ',' << j.accelerator << ',' << (j.preemptible ? 1 : 0)
        << ',' << j.duration_s << ',' << j.priority << ',' << j.checkpoint_interval_s;
    if (sweeps) {
      std::string deps = core::FormatDependencies(j.dependencies);
      std::replace(deps.begin(), deps.end(), ',', ';');
      auto id = [](int64_t v) { return v > 0 ? std::to_string(v) : std::string(); };
      out << ',' << id(j.job_id) << ',' << id(j.array_id) << ','
          << (j.array_id > 0 ? std::to_string(j.array_index) : "") << ','
          << (j.array_throttle > 0 ? std::to_string(j.array_throttle) : "") << ',' << deps << ','
          << (j.fails ? 1 : 0);
    }
    if (multislice) out << ',' << j.slices;
    out << '\n';
  }
}

Result<Trace> ParsePhilly(std::istream& in, const PhillyOptions& options) {
  std::string line;
  if (!std::getline(in, line) || line.rfind("timestamp,duration,num_gpus", 0) != 0) {
    return InvalidArgument("not a Philly trace: expected the header "
                           "timestamp,duration,num_gpus,gpu_time,cluster");
  }
  // First every row, then times relative to the earliest one: the public trace is distributed
  // unsorted, so the first row is not the earliest.
  struct Row {
    int64_t when;
    double duration;
    double gpus;
    std::string cluster;
    int line;
  };
  std::vector<Row> rows;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (options.max_rows > 0 && number - 1 > options.max_rows) break;
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> f = SplitCsv(line);
    if (f.size() < 5) {
      return InvalidArgument("line " + std::to_string(number) + ": expected 5 columns");
    }
    auto when = ParseTimestamp(f[0], number);
    auto duration = ParseNumber(f[1], "duration", number);
    auto gpus = ParseNumber(f[2], "num_gpus", number);
    if (!when) return std::unexpected(when.error());
    if (!duration) return std::unexpected(duration.error());
    if (!gpus) return std::unexpected(gpus.error());
    if (*duration < 0 || *gpus < 0) {
      return InvalidArgument("line " + std::to_string(number) + ": duration and num_gpus must be "
                             ">= 0, not " + f[1] + " and " + f[2]);
    }
    rows.push_back(Row{*when, *duration, *gpus, f[4], number});
  }
  Trace trace;
  if (rows.empty()) return trace;
  const int64_t first =
      std::min_element(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.when < b.when; })
          ->when;
  // Which rows are preemptible: a seeded hash of the row's content and of how many equal rows
  // came before it (equal rows are interchangeable), never of its position in the file.
  std::map<std::string, uint64_t> seen;
  std::vector<TraceJob> jobs;
  jobs.reserve(rows.size());  // growing it moved every row again: 2.5% of a Philly replay
  for (const Row& r : rows) {
    // Clamped before the conversion to int (a larger double does not convert); any count above
    // a pod's 512 cores is rejected below like every row larger than a pod.
    const double cores = std::clamp(std::ceil(r.gpus), 1.0, 1e6);
    auto slice = SmallestV2SliceFor(static_cast<int>(cores));
    if (!slice || r.duration <= 0) {
      ++trace.rejected;
      continue;
    }
    TraceJob job;
    job.submit_s = static_cast<double>(r.when - first);
    job.user = r.cluster;
    job.accelerator = *slice;
    job.duration_s = r.duration;
    job.checkpoint_interval_s = options.checkpoint_interval_s;
    if (Status s = CheckTimes(job, r.line); !s.ok()) return std::unexpected(s);
    const std::string content =
        std::to_string(r.when) + "," + Fixed6(r.duration) + "," + Fixed6(r.gpus) + "," + r.cluster;
    const uint64_t occurrence = seen[content]++;
    // SHA-256: the same on every machine (std::hash is not).
    const std::string digest = Sha256(content);
    uint64_t content_hash = 0;
    std::memcpy(&content_hash, digest.data(), sizeof content_hash);
    const uint64_t h = Mix(options.seed ^ Mix(content_hash ^ Mix(occurrence)));
    job.preemptible = static_cast<double>(h >> 11) * 0x1.0p-53 < options.preemptible_fraction;
    jobs.push_back(std::move(job));
  }
  trace.jobs.reserve(jobs.size());
  for (size_t i : CanonicalOrder(jobs)) trace.jobs.push_back(std::move(jobs[i]));
  return trace;
}

}  // namespace podsched::sim
