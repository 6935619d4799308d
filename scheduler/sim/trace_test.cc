#include "scheduler/sim/trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <map>
#include <sstream>
#include <tuple>

#include "scheduler/sim/generator.h"

namespace podsched::sim {
namespace {

TEST(TraceTest, ParsesPodsimCsvAndSortsBySubmitTime) {
  std::istringstream in(
      "submit_time_s,user,accelerator,preemptible,duration_s,priority,checkpoint_interval_s\n"
      "10,ada,v2-32,1,3600,2,600\n"
      "5,bob,v2-8,false,60,,\n");
  auto trace = ParsePodsimCsv(in);
  ASSERT_TRUE(trace.has_value()) << trace.error().ToString();
  ASSERT_EQ(trace->jobs.size(), 2u);
  EXPECT_EQ(trace->jobs[0].user, "bob");
  EXPECT_FALSE(trace->jobs[0].preemptible);
  EXPECT_EQ(trace->jobs[1].accelerator, "v2-32");
  EXPECT_TRUE(trace->jobs[1].preemptible);
  EXPECT_EQ(trace->jobs[1].priority, 2);
  EXPECT_EQ(trace->jobs[1].checkpoint_interval_s, 600);
}

TEST(TraceTest, DurationFromStepsAndTheCostModel) {
  std::istringstream in(
      "submit_time_s,user,accelerator,preemptible,steps,workload\n"
      "0,ada,v2-8,0,1250,resnet50\n");
  auto trace = ParsePodsimCsv(in);
  ASSERT_TRUE(trace.has_value()) << trace.error().ToString();
  // One ResNet-50 epoch on a v2-8 is about 4 minutes (docs/pod.md, "Cost model").
  EXPECT_NEAR(trace->jobs[0].duration_s, 240, 30);
}

TEST(TraceTest, PodsimErrorsNameTheLine) {
  std::istringstream bad_number("submit_time_s,user,accelerator,preemptible,duration_s\n"
                                "0,ada,v2-8,0,abc\n");
  auto r = ParsePodsimCsv(bad_number);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "line 2: duration_s is 'abc', not a number");
  std::istringstream no_column("user,accelerator\n");
  EXPECT_FALSE(ParsePodsimCsv(no_column).has_value());
  std::istringstream bad_flag("submit_time_s,user,accelerator,preemptible,duration_s\n"
                              "0,ada,v2-8,maybe,5\n");
  EXPECT_FALSE(ParsePodsimCsv(bad_flag).has_value());
}

TEST(TraceTest, PhillyMapping) {
  std::istringstream in(
      "timestamp,duration,num_gpus,gpu_time,cluster\n"
      "2017-09-04 10:30:41,100.0,8,800.0,7f04ca\n"
      "2017-09-04 10:31:41,50.0,12,600.0,6214e9\n"
      "2017-09-04 10:32:41,50.0,1,50.0,6214e9\n"
      "2017-09-04 10:33:41,50.0,600,50.0,6214e9\n");
  PhillyOptions options;
  options.preemptible_fraction = 0;
  auto trace = ParsePhilly(in, options);
  ASSERT_TRUE(trace.has_value()) << trace.error().ToString();
  ASSERT_EQ(trace->jobs.size(), 3u);
  EXPECT_EQ(trace->rejected, 1);  // 600 GPUs: more than a v2 pod
  EXPECT_EQ(trace->jobs[0].accelerator, "v2-8");
  EXPECT_EQ(trace->jobs[0].submit_s, 0);
  EXPECT_EQ(trace->jobs[1].accelerator, "v2-32");
  EXPECT_EQ(trace->jobs[1].submit_s, 60);
  EXPECT_EQ(trace->jobs[1].user, "6214e9");
  EXPECT_EQ(trace->jobs[2].accelerator, "v2-8");
  EXPECT_EQ(trace->jobs[2].checkpoint_interval_s, 1800);
}

// Timestamps are read as std::get_time reads "%Y-%m-%d %H:%M:%S": the fields' ranges (a leap
// second, a day past the month's end, normalised by timegm), and text around them (a row's '\r',
// a one-digit field, trailing text after the seconds), whether read directly or by the stream.
TEST(TraceTest, PhillyTimestampsAtTheEdges) {
  std::istringstream in(
      "timestamp,duration,num_gpus,gpu_time,cluster\r\n"
      "2017-09-04 10:30:41,100.0,8,800.0,a\r\n"
      "2017-09-04 10:31:60,100.0,8,800.0,b\r\n"    // a leap second: 10:32:00
      "2017-02-31 00:00:00,100.0,8,800.0,c\n"      // March 3rd
      "2017-9-4 10:30:42,100.0,8,800.0,d\n"        // one-digit month and day
      "2017-09-04 10:30:43 UTC,100.0,8,800.0,e\n"  // trailing text after the seconds
      "1970-01-01 00:00:00,100.0,8,800.0,f\n");
  auto trace = ParsePhilly(in, PhillyOptions{});
  ASSERT_TRUE(trace.has_value()) << trace.error().ToString();
  std::map<std::string, double> submit;
  for (const TraceJob& j : trace->jobs) submit[j.user] = j.submit_s;
  ASSERT_EQ(submit.size(), 6u);
  const double a = 1'504'521'041.0;  // 2017-09-04 10:30:41 UTC, from the earliest row (f)
  EXPECT_EQ(submit["f"], 0);
  EXPECT_EQ(submit["a"], a);
  EXPECT_EQ(submit["b"], a + 79);
  EXPECT_EQ(submit["c"], 1'488'499'200.0);
  EXPECT_EQ(submit["d"], a + 1);
  EXPECT_EQ(submit["e"], a + 2);
  for (const char* bad : {"2017-09-04 10:30:61", "2017-13-04 10:30:41", "2017-09-00 10:30:41",
                          "2017-09-32 10:30:41", "2017-09-04 24:00:00", "2017-09-04 10:60:00",
                          "2017-09-04T10:30:41", "2017-09-04 10:3a:41", ""}) {
    std::istringstream rows("timestamp,duration,num_gpus,gpu_time,cluster\n" + std::string(bad) +
                            ",100.0,8,800.0,c\n");
    auto r = ParsePhilly(rows, PhillyOptions{});
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message().find("is not YYYY-MM-DD HH:MM:SS"), std::string::npos)
        << r.error().message();
  }
}

// Found by tests/fuzz (philly_trace): a GPU count beyond int's range was converted to int
// (undefined behaviour) before the row was judged larger than a pod.
TEST(TraceTest, PhillyRejectsHugeGpuCountsAsLargerThanAPod) {
  std::istringstream in(
      "timestamp,duration,num_gpus,gpu_time,cluster\n"
      "2017-09-04 10:30:41,100.0,2147483648,1,c\n"
      "2017-09-04 10:30:42,100.0,1e300,1,c\n"
      "2017-09-04 10:30:43,100.0,8,1,c\n");
  auto trace = ParsePhilly(in, PhillyOptions{});
  ASSERT_TRUE(trace.has_value()) << trace.error().ToString();
  EXPECT_EQ(trace->rejected, 2);
  ASSERT_EQ(trace->jobs.size(), 1u);
  EXPECT_EQ(trace->jobs[0].accelerator, "v2-8");
}

// Seen beside that finding: the podsim CSV's priority had the same conversion.
TEST(TraceTest, PodsimRejectsPriorityBeyondInt) {
  std::istringstream priority("submit_time_s,user,accelerator,preemptible,duration_s,priority\n"
                              "0,ada,v2-8,0,5,1e300\n");
  auto r = ParsePodsimCsv(priority);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("priority"), std::string::npos) << r.error().message();
  std::istringstream fraction("submit_time_s,user,accelerator,preemptible,duration_s,priority\n"
                              "0,ada,v2-8,0,5,1.5\n");
  EXPECT_FALSE(ParsePodsimCsv(fraction).has_value());
}

TEST(TraceTest, PhillyPreemptibleFractionIsSeeded) {
  std::ostringstream text;
  text << "timestamp,duration,num_gpus,gpu_time,cluster\n";
  for (int i = 0; i < 2000; ++i) text << "2017-09-04 10:30:41,100.0,1,100.0,c\n";
  auto count = [&](uint64_t seed) {
    std::istringstream in(text.str());
    auto trace = ParsePhilly(in, {0.3, seed, 1800, 0});
    int n = 0;
    for (const TraceJob& j : trace->jobs) n += j.preemptible;
    return n;
  };
  EXPECT_NEAR(count(1), 600, 90);
  EXPECT_EQ(count(1), count(1));
  EXPECT_NE(count(1), count(2));
}

// The lines of a CSV text after its header, shuffled with a fixed seed; the header first.
std::string Shuffled(const std::string& csv, uint64_t seed) {
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  std::vector<std::string> rows;
  while (std::getline(in, line)) rows.push_back(line);
  std::mt19937_64 rng(seed);
  std::shuffle(rows.begin(), rows.end(), rng);
  std::string out = header + "\n";
  for (const std::string& r : rows) out += r + "\n";
  return out;
}

std::string AsCsv(const Trace& trace) {
  std::ostringstream out;
  WritePodsimCsv(trace.jobs, out);
  return out.str();
}

// Philly rows with equal timestamps, equal rows, and rows too large for a pod, in file order and
// shuffled: the same trace. The public trace is distributed unsorted; its first row used to be
// taken as time zero, which made earlier rows arrive before the epoch.
TEST(TraceTest, PhillyGivesTheSameTraceForEveryRowOrder) {
  std::ostringstream text;
  text << "timestamp,duration,num_gpus,gpu_time,cluster\n";
  std::mt19937_64 rng(3);
  for (int i = 0; i < 400; ++i) {
    const int minute = static_cast<int>(rng() % 40);
    const int gpus[] = {1, 2, 4, 8, 16, 64, 600};
    text << "2017-10-0" << 1 + rng() % 3 << " 1" << minute % 10 << ":" << 10 + minute << ":0"
         << rng() % 3 << "," << 60 + rng() % 5 << ".0," << gpus[rng() % 7] << ",1.0,c"
         << rng() % 4 << "\n";
  }
  std::istringstream sorted_in(text.str());
  auto reference = ParsePhilly(sorted_in, PhillyOptions{});
  ASSERT_TRUE(reference) << reference.error().ToString();
  EXPECT_GT(reference->rejected, 0);
  EXPECT_EQ(reference->jobs.front().submit_s, 0);  // the earliest row, wherever it stands
  for (uint64_t seed : {1, 2, 3}) {
    std::istringstream in(Shuffled(text.str(), seed));
    auto trace = ParsePhilly(in, PhillyOptions{});
    ASSERT_TRUE(trace) << trace.error().ToString();
    EXPECT_EQ(trace->rejected, reference->rejected);
    EXPECT_EQ(AsCsv(*trace), AsCsv(*reference)) << "seed " << seed;
  }
}

// Arrays, chains of dependencies (some at equal submit times) and failing jobs, shuffled: the
// same trace, and every dependency still finds its target.
TEST(TraceTest, PodsimCsvGivesTheSameTraceForEveryRowOrder) {
  GenOptions options{600, 4, Mix::kSlices, 0.9, 6, 0.2, 0.5, 0.05};
  std::ostringstream csv;
  WritePodsimCsv(Generate(options), csv);
  // Two more rows at one time, the dependent one first in the file.
  std::string text = csv.str() + "0,zed,v2-8,0,60,0,0,900002,,,,afterok:900001,0\n" +
                     "0,zed,v2-8,0,60,0,0,900001,,,,,0\n";
  std::istringstream in(text);
  auto reference = ParsePodsimCsv(in);
  ASSERT_TRUE(reference) << reference.error().ToString();
  for (uint64_t seed : {1, 2, 3}) {
    std::istringstream shuffled(Shuffled(text, seed));
    auto trace = ParsePodsimCsv(shuffled);
    ASSERT_TRUE(trace) << trace.error().ToString();
    EXPECT_EQ(AsCsv(*trace), AsCsv(*reference)) << "seed " << seed;
  }
}

TEST(TraceTest, TracesPodsimCannotMakeSenseOfAreErrorsNamingTheLine) {
  const std::pair<std::string, const char*> podsim[] = {
      {"0,ada,v2-8,0,1e12\n", "line 2: duration 1e+12 s is beyond"},
      {"0,ada,v2-8,0,10\n4e9,ada,v2-8,0,10\n", "line 3: submit time"},
      {"0,ada,v2-8,0,-5\n", "line 2: needs submit_time_s >= 0"},
  };
  for (const auto& [rows, message] : podsim) {
    std::istringstream in("submit_time_s,user,accelerator,preemptible,duration_s\n" + rows);
    auto trace = ParsePodsimCsv(in);
    ASSERT_FALSE(trace) << rows;
    EXPECT_NE(trace.error().message().find(message), std::string::npos) << trace.error().message();
  }
  const std::pair<std::string, const char*> philly[] = {
      {"2017-09-04 10:30:41,-100.0,8,1,c\n", "line 2: duration and num_gpus must be >= 0"},
      {"2017-09-04 10:30:41,100.0,8,1,c\n2017-09-04 10:30:41,100.0,-8,1,c\n", "line 3:"},
      {"2017-09-04 10:30:41,1e300,8,1,c\n", "line 2: duration"},
      {"2017-09-04 10:30:41,100.0,8,1,c\n1017-09-04 10:30:41,100.0,8,1,c\n",
       "submit time"},
  };
  for (const auto& [rows, message] : philly) {
    std::istringstream in("timestamp,duration,num_gpus,gpu_time,cluster\n" + rows);
    auto trace = ParsePhilly(in, PhillyOptions{});
    ASSERT_FALSE(trace) << rows;
    EXPECT_NE(trace.error().message().find(message), std::string::npos) << trace.error().message();
  }
  // A dependency cycle at one submit time: no order can submit it.
  std::istringstream cycle(
      "submit_time_s,user,accelerator,preemptible,duration_s,job_id,dependency\n"
      "0,ada,v2-8,0,10,1,afterok:2\n0,ada,v2-8,0,10,2,afterok:1\n");
  auto trace = ParsePodsimCsv(cycle);
  ASSERT_FALSE(trace);
  EXPECT_NE(trace.error().message().find("cycle"), std::string::npos) << trace.error().message();
}

TEST(TraceTest, SmallestSlice) {
  EXPECT_EQ(*SmallestV2SliceFor(1), "v2-8");
  EXPECT_EQ(*SmallestV2SliceFor(9), "v2-32");
  EXPECT_EQ(*SmallestV2SliceFor(200), "v2-256");
  EXPECT_FALSE(SmallestV2SliceFor(513).has_value());
}

TEST(GeneratorTest, MixesAreDeterministicAndRoundTripThroughCsv) {
  auto grant = Generate({500, 3, Mix::kGrant, 0.9, 10});
  ASSERT_EQ(grant.size(), 500u);
  int preemptible = 0;
  for (const TraceJob& j : grant) {
    EXPECT_EQ(j.accelerator, "v2-8");
    preemptible += j.preemptible;
  }
  EXPECT_NEAR(preemptible, 375, 50);
  auto slices = Generate({500, 3, Mix::kSlices, 0.9, 10});
  int big = 0;
  for (const TraceJob& j : slices) big += j.accelerator != "v2-8";
  EXPECT_GT(big, 150);
  std::ostringstream out;
  WritePodsimCsv(slices, out);
  std::istringstream in(out.str());
  auto back = ParsePodsimCsv(in);
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  ASSERT_EQ(back->jobs.size(), slices.size());
  EXPECT_EQ(back->jobs[17].accelerator, slices[17].accelerator);
  EXPECT_EQ(back->jobs.back().submit_s, slices.back().submit_s);  // > 10^6 s, exact
  EXPECT_EQ(Generate({500, 3, Mix::kSlices, 0.9, 10})[42].duration_s, slices[42].duration_s);
  EXPECT_FALSE(ParseMix("mixed").has_value());
}

TEST(TraceTest, SweepColumnsArraysDependenciesAndFailures) {
  std::istringstream in(
      "submit_time_s,user,accelerator,preemptible,duration_s,job_id,array_id,array_index,"
      "array_throttle,dependency,fails\n"
      "0,ada,v2-8,0,100,1,,,,,1\n"
      "0,ada,v2-8,0,50,,7,0,2,afterany:1,\n"
      "0,ada,v2-8,0,60,,7,1,2,afterany:1,0\n"
      "5,ada,v2-8,0,10,2,,,,afterok:7;afternotok:1:7_1,\n");
  auto trace = ParsePodsimCsv(in);
  ASSERT_TRUE(trace.has_value()) << trace.error().ToString();
  ASSERT_EQ(trace->jobs.size(), 4u);
  EXPECT_TRUE(trace->jobs[0].fails);
  EXPECT_EQ(trace->jobs[2].array_id, 7);
  EXPECT_EQ(trace->jobs[2].array_index, 1);
  EXPECT_EQ(trace->jobs[2].array_throttle, 2);
  ASSERT_EQ(trace->jobs[3].dependencies.size(), 3u);
  EXPECT_EQ(trace->jobs[3].dependencies[2],
            (core::Dependency{core::DependencyKind::kAfterNotOk, JobId(7), 1}));
  std::ostringstream out;
  WritePodsimCsv(trace->jobs, out);
  std::istringstream again(out.str());
  auto reread = ParsePodsimCsv(again);
  ASSERT_TRUE(reread.has_value()) << reread.error().ToString() << "\n" << out.str();
  EXPECT_EQ(reread->jobs[3].dependencies, trace->jobs[3].dependencies);
  EXPECT_EQ(reread->jobs[1].array_id, 7);
}

TEST(TraceTest, SweepErrorsNameTheLine) {
  const std::string header =
      "submit_time_s,user,accelerator,preemptible,duration_s,job_id,array_id,array_index,"
      "dependency\n";
  const std::pair<const char*, const char*> cases[] = {
      {"0,ada,v2-8,0,10,1,,,afterok:2\n", "names no row"},
      {"0,ada,v2-8,0,10,1,,,\n0,ada,v2-8,0,10,1,,,\n", "used twice"},
      {"0,ada,v2-8,0,10,1,2,0,\n", "leave job_id empty"},
      {"0,ada,v2-8,0,10,,2,0,\n0,bob,v2-8,0,10,,2,1,\n", "must share"},
      {"0,ada,v2-8,0,10,,2,0,\n0,ada,v2-8,0,10,,2,0,\n", "twice"},
      {"0,ada,v2-8,0,10,,2,0,\n0,ada,v2-8,0,10,3,,,afterok:2_5\n", "has no task 5"},
      {"0,ada,v2-8,0,10,1,,,afterok:1\n", "own job"},
      {"0,ada,v2-8,0,10,1,,,afterwards:1\n", "not a dependency type"},
      {"0,ada,v2-8,0,10,1.5,,,\n", "integers"},
  };
  for (const auto& [rows, message] : cases) {
    std::istringstream in(header + rows);
    auto trace = ParsePodsimCsv(in);
    ASSERT_FALSE(trace.has_value()) << rows;
    EXPECT_NE(trace.error().message().find("line "), std::string::npos) << trace.error().message();
    EXPECT_NE(trace.error().message().find(message), std::string::npos)
        << rows << ": " << trace.error().message();
  }
}

// bursts: one user's submissions close together, gangs, and jobs far longer than a day.
TEST(GeneratorTest, BurstsHaveBurstsGangsAndLongJobs) {
  const auto jobs = Generate({3000, 5, Mix::kBursts, 0.9, 10});
  ASSERT_EQ(jobs.size(), 3000u);
  int gangs = 0, in_burst = 0;
  double longest = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    gangs += jobs[i].accelerator == "v2-128" || jobs[i].accelerator == "v2-256" ||
             jobs[i].accelerator == "v2-512";
    longest = std::max(longest, jobs[i].duration_s);
    // Within a minute of the previous submission, by the same user.
    in_burst += i > 0 && jobs[i].user == jobs[i - 1].user &&
                jobs[i].submit_s - jobs[i - 1].submit_s <= 60;
    EXPECT_LE(jobs[i].duration_s, 14 * 86400.0);
    if (i > 0) {
      EXPECT_GE(jobs[i].submit_s, jobs[i - 1].submit_s);
    }
  }
  EXPECT_GT(gangs, 20);
  EXPECT_GT(in_burst, 1500);
  EXPECT_GT(longest, 3 * 86400.0);
  EXPECT_EQ(Generate({3000, 5, Mix::kBursts, 0.9, 10})[1234].duration_s, jobs[1234].duration_s);
}

// frag: short preemptible v2-8 jobs (median 8 min, at most an hour), and a few on-demand blocks
// of the usual length that carry about a third of the offered work.
TEST(GeneratorTest, FragHasShortPreemptibleSinglesAndOnDemandBlocks) {
  const auto jobs = Generate({20000, 5, Mix::kFrag, 0.7, 10});
  ASSERT_EQ(jobs.size(), 20000u);
  int blocks = 0;
  double small_s = 0, block_core_s = 0, small_core_s = 0;
  std::vector<double> small;
  for (const TraceJob& j : jobs) {
    if (j.accelerator == "v2-8") {
      EXPECT_TRUE(j.preemptible);
      EXPECT_LE(j.duration_s, 3600.0);
      small.push_back(j.duration_s);
      small_core_s += 8 * j.duration_s;
    } else {
      EXPECT_TRUE(j.accelerator == "v2-32" || j.accelerator == "v2-128") << j.accelerator;
      EXPECT_FALSE(j.preemptible);
      ++blocks;
      block_core_s += (j.accelerator == "v2-32" ? 32 : 128) * j.duration_s;
    }
  }
  std::sort(small.begin(), small.end());
  small_s = small[small.size() / 2];
  EXPECT_NEAR(blocks, 150, 40);
  EXPECT_NEAR(small_s, 480, 60);
  EXPECT_NEAR(block_core_s / (block_core_s + small_core_s), 0.3, 0.1);
  EXPECT_FALSE(ParseMix("fragments").has_value());
  EXPECT_EQ(ParseMix("frag").value(), Mix::kFrag);
}

// --multislice: a share of the jobs ask for 2, 4 or 8 slices; every other column is the trace's
// without it, array tasks keep one slice (they share one spec), and the column parses back.
TEST(GeneratorTest, MultisliceSharesChangeOnlyTheSlicesColumn) {
  GenOptions options;
  options.jobs = 2000;
  options.seed = 4;
  options.arrays = 0.1;
  const auto plain = Generate(options);
  options.multislice = 0.3;
  const auto multi = Generate(options);
  ASSERT_EQ(plain.size(), multi.size());
  std::map<int, int> by_slices;
  int single_jobs = 0, multislice_jobs = 0;  // not array tasks
  for (size_t i = 0; i < multi.size(); ++i) {
    TraceJob same = multi[i];
    same.slices = 1;
    EXPECT_EQ(std::tie(same.submit_s, same.user, same.accelerator, same.duration_s, same.array_id),
              std::tie(plain[i].submit_s, plain[i].user, plain[i].accelerator, plain[i].duration_s,
                       plain[i].array_id));
    ++by_slices[multi[i].slices];
    if (multi[i].array_id > 0) {
      EXPECT_EQ(multi[i].slices, 1);
    } else {
      ++single_jobs;
      multislice_jobs += multi[i].slices > 1;
    }
  }
  EXPECT_EQ(by_slices.size(), 4u);  // 1, 2, 4 and 8
  EXPECT_NEAR(static_cast<double>(multislice_jobs) / single_jobs, 0.3, 0.05);
  std::stringstream csv;
  WritePodsimCsv(multi, csv);
  auto back = ParsePodsimCsv(csv);
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  ASSERT_EQ(back->jobs.size(), multi.size());
  std::map<int, int> parsed;
  for (const TraceJob& j : back->jobs) ++parsed[j.slices];
  EXPECT_EQ(parsed, by_slices);
}

TEST(GeneratorTest, SweepsMakeArraysChainsAndFailuresThatParseBack) {
  GenOptions options;
  options.jobs = 400;
  options.seed = 3;
  options.arrays = 0.2;
  options.chains = 0.5;
  options.fails = 0.1;
  const auto jobs = Generate(options);
  EXPECT_EQ(jobs.size(), 400u);
  int arrays = 0, dependent = 0, failing = 0;
  for (const TraceJob& j : jobs) {
    arrays += j.array_id > 0 && j.array_index == 0;
    dependent += !j.dependencies.empty();
    failing += j.fails;
  }
  EXPECT_GT(arrays, 5);
  EXPECT_GT(dependent, 50);
  EXPECT_GT(failing, 10);
  std::stringstream csv;
  WritePodsimCsv(jobs, csv);
  auto trace = ParsePodsimCsv(csv);
  ASSERT_TRUE(trace.has_value()) << trace.error().ToString();
  EXPECT_EQ(trace->jobs.size(), 400u);
  // Without sweeps the generator's trace is unchanged (same draws, plain header).
  GenOptions plain;
  plain.jobs = 50;
  std::ostringstream a, b;
  WritePodsimCsv(Generate(plain), a);
  EXPECT_EQ(a.str().substr(0, a.str().find('\n')),
            "submit_time_s,user,accelerator,preemptible,duration_s,priority,checkpoint_interval_s");
}

}  // namespace
}  // namespace podsched::sim
