// bench_daemon: load generator for podsched's HTTP API.
//
// Starts podsched (--podsched PATH) on an ephemeral port in a temp data dir, then for 1, 8 and 64
// concurrent clients (threads, each with one keep-alive libcurl handle): durable submissions
// (every 201 means the job is committed to SQLite), list requests (first page of 100, with
// --stored jobs in the store) and single-job reads. Last, whether reads slow the scheduling
// passes: one client submits while 0, then 64, clients list, and the passes' durations are read
// from podsched's /metrics histogram. Prints latency percentiles and FIGURE lines.
#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

size_t Discard(char*, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append("x");
  return size * n;
}

size_t Keep(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// GET url without credentials; the body, or "" on failure.
std::string Fetch(const std::string& url) {
  std::string body;
  CURL* curl = curl_easy_init();
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Keep);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (curl_easy_perform(curl) != CURLE_OK) body.clear();
  curl_easy_cleanup(curl);
  return body;
}

// podsched_scheduling_pass_seconds from /metrics: bucket bounds with their cumulative counts,
// the sum and the count.
struct PassHistogram {
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count), +Inf last
  double sum = 0, count = 0;
};

PassHistogram ReadPasses(const std::string& base) {
  PassHistogram h;
  std::istringstream text(Fetch(base + "/metrics"));
  const std::string kBucket = "podsched_scheduling_pass_seconds_bucket{le=\"";
  for (std::string line; std::getline(text, line);) {
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const double value = std::strtod(line.c_str() + space + 1, nullptr);
    if (line.starts_with(kBucket)) {
      const std::string le = line.substr(kBucket.size(), line.find('"', kBucket.size()) - kBucket.size());
      h.buckets.emplace_back(le == "+Inf" ? 1e9 : std::strtod(le.c_str(), nullptr), value);
    } else if (line.starts_with("podsched_scheduling_pass_seconds_sum ")) {
      h.sum = value;
    } else if (line.starts_with("podsched_scheduling_pass_seconds_count ")) {
      h.count = value;
    }
  }
  return h;
}

struct Client {
  explicit Client(const std::string& token) {
    curl = curl_easy_init();
    auth = "Authorization: Bearer " + token;
    headers = curl_slist_append(nullptr, auth.c_str());
    headers = curl_slist_append(headers, "Content-Type: application/json");
  }
  ~Client() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
  }
  // Returns the HTTP status (0 when the request failed); the body goes to `reply` if given.
  long Do(const std::string& url, const std::string* body, std::string* reply = nullptr) {
    std::string sink;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, reply != nullptr ? Keep : Discard);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, reply != nullptr ? reply : &sink);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    if (body != nullptr) {
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->c_str());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body->size()));
    } else {
      curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    }
    if (curl_easy_perform(curl) != CURLE_OK) return 0;
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    return status;
  }
  CURL* curl;
  std::string auth;
  curl_slist* headers;
};

struct Result {
  // From the moment every client had its connection open (each made one request first, not
  // counted) until the last request: the server's steady rate.
  double seconds = 0;
  // From the first client thread's start: with 64 threads and connections set up, which took
  // 0.1-0.2 s here, a large share of 2,000 requests' time (the only figure before 2026-12-06).
  double seconds_with_connect = 0;
  std::vector<double> latencies_ms;
  int errors = 0;
};

enum class Kind { kSubmit, kList, kGet };

// `total` requests spread over `clients` threads: POST /jobs, GET /jobs (a page of 100), or
// GET /jobs/{id} of jobs 1..`ids` in turn. With `stop`, clients go on until it is set (`total`
// is then ignored). Each client first makes one request of the same kind, untimed (a submission
// then adds a job), and the timed requests start once all have.
Result Run(const std::string& base, const std::string& token, int clients, int total, Kind kind,
           int ids = 1, const std::atomic<bool>* stop = nullptr) {
  std::vector<std::vector<double>> lat(clients);
  std::atomic<int> errors{0};
  std::atomic<int> next{0};
  const auto cold_start = Clock::now();
  std::barrier connected(clients + 1);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      Client client(token);
      std::string body =
          R"({"name":"bench","accelerator":"v2-8","preemptible":true,"command":"x"})";
      const bool submit = kind == Kind::kSubmit;
      std::string url = base + (submit ? "/api/v1/jobs" : "/api/v1/jobs?page_size=100");
      int expect = submit ? 201 : 200;
      if (client.Do(kind == Kind::kGet ? base + "/api/v1/jobs/1" : url,
                    submit ? &body : nullptr) != expect) {
        ++errors;
      }
      connected.arrive_and_wait();
      for (;;) {
        const int n = next.fetch_add(1);
        if (stop != nullptr ? stop->load() : n >= total) break;
        if (kind == Kind::kGet) url = base + "/api/v1/jobs/" + std::to_string(1 + n % ids);
        auto t0 = Clock::now();
        long status = client.Do(url, submit ? &body : nullptr);
        lat[c].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (status != expect) ++errors;
      }
    });
  }
  connected.arrive_and_wait();
  const auto start = Clock::now();
  for (auto& t : threads) t.join();
  Result r;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.seconds_with_connect = std::chrono::duration<double>(Clock::now() - cold_start).count();
  for (auto& l : lat) r.latencies_ms.insert(r.latencies_ms.end(), l.begin(), l.end());
  std::sort(r.latencies_ms.begin(), r.latencies_ms.end());
  r.errors = errors;
  return r;
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()));
  return sorted[i];
}

// A podsched of its own, in a fresh data directory, on an ephemeral port.
struct Podsched {
  pid_t pid = -1;
  fs::path dir;
  std::string base, token;

  bool Start(const std::string& binary) {
    char tmpl[] = "/tmp/bench_daemon.XXXXXX";
    dir = mkdtemp(tmpl);
    {
      std::ofstream cfg(dir / "podsched.yaml");
      cfg << "limits: {requests_per_second: 1000000, burst: 1000000}\n"
             "scheduler: {default_quota: {on_demand_cores: 40, preemptible_cores: 800},\n"
             "            max_jobs_created_per_user_per_hour: 1000000}\n"
             "bus: {address: \"tcp://127.0.0.1:*\"}\n";  // beside another podsched
    }
    int out[2];
    if (pipe(out) != 0) return false;
    pid = fork();
    if (pid == 0) {
      dup2(out[1], STDOUT_FILENO);
      int null = open("/dev/null", O_WRONLY);
      dup2(null, STDERR_FILENO);
      std::string data = (dir / "var").string(), config = (dir / "podsched.yaml").string();
      execl(binary.c_str(), binary.c_str(), "--config", config.c_str(), "--data-dir",
            data.c_str(), "--port", "0", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    FILE* f = fdopen(out[0], "r");
    char line[512];
    while (base.empty() && fgets(line, sizeof line, f) != nullptr) {
      std::string s(line);
      const std::string kPrefix = "podsched listening on ";
      if (s.starts_with(kPrefix))
        base = s.substr(kPrefix.size(), s.find_first_of("\r\n") - kPrefix.size());
    }
    if (base.empty()) {
      std::cerr << "bench_daemon: podsched did not start\n";
      return false;
    }
    std::ifstream(dir / "var/admin.token") >> token;
    return true;
  }
  ~Podsched() { Stop(); }
  void Stop() {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    fs::remove_all(dir);
  }
  // VmRSS or VmHWM (peak) of the process, in MB; -1 if unreadable.
  double MemoryMb(const std::string& field) const {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with(field + ":")) return std::strtod(line.c_str() + field.size() + 1, nullptr) / 1024;
    }
    return -1;
  }
};

// podsched's memory with many jobs stored and some queued (issue 29: < 500 MB with 100,000
// stored and 10,000 queued): `arrays` arrays of `size` tasks, all but the last cancelled.
bool Memory(const std::string& binary, int arrays, int size) {
  Podsched server;
  if (!server.Start(binary)) return false;
  const double empty = server.MemoryMb("VmRSS");
  Client client(server.token);
  const std::string body = R"({"name":"rss","accelerator":"v2-8","preemptible":true,)"
                           R"("command":"x","array":"0-)" + std::to_string(size - 1) + R"("})";
  // Each array but the last is cancelled before the next comes (a user may have 50,000 active).
  for (int a = 0; a < arrays; ++a) {
    std::string reply;
    if (client.Do(server.base + "/api/v1/jobs", &body, &reply) != 201) {
      std::cerr << "bench_daemon: an array submission failed: " << reply << "\n";
      return false;
    }
    // "array_id":"123" (proto3 JSON writes an int64 as a string).
    const std::string key = "\"array_id\":";
    size_t at = reply.find(key);
    if (at == std::string::npos) {
      std::cerr << "bench_daemon: no array_id in " << reply << "\n";
      return false;
    }
    at += key.size() + (reply[at + key.size()] == '"' ? 1 : 0);
    const long long id = std::strtoll(reply.c_str() + at, nullptr, 10);
    if (a + 1 < arrays) {
      const std::string url = server.base + "/api/v1/jobs/" + std::to_string(id) + "/cancel";
      const std::string none;
      if (client.Do(url, &none, &reply) != 200) {
        std::cerr << "bench_daemon: cancelling array " << id << " failed: " << reply << "\n";
        return false;
      }
    }
    std::printf("memory: %d of %d arrays of %d tasks submitted\n", a + 1, arrays, size);
    std::fflush(stdout);
  }
  // A list and a pass over the queue before the reading.
  if (client.Do(server.base + "/api/v1/jobs?page_size=100", nullptr) != 200) return false;
  const int stored = arrays * size, queued = size;
  const double rss = server.MemoryMb("VmRSS"), peak = server.MemoryMb("VmHWM");
  std::printf("memory: %d jobs stored, %d queued: RSS %.0f MB (peak %.0f MB; %.0f MB empty)\n",
              stored, queued, rss, peak, empty);
  std::printf("FIGURE daemon_rss_stored%d_queued%d %.1f MB\n", stored, queued, rss);
  std::printf("FIGURE daemon_peak_rss_stored%d_queued%d %.1f MB\n", stored, queued, peak);
  server.Stop();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("bench_daemon: podsched HTTP API load generator");
  std::string podsched;
  int stored = 10000, submits = 2000, lists = 2000;
  app.add_option("--podsched", podsched, "path of the podsched binary")->required();
  app.add_option("--stored", stored, "jobs in the store during the list phase");
  app.add_option("--submits", submits, "submissions per concurrency level");
  app.add_option("--lists", lists, "list and single-job requests per concurrency level");
  int pass_submits = 300;
  int rss_arrays = 10, rss_array_size = 10000;
  app.add_option("--rss-arrays", rss_arrays,
                 "memory phase: arrays submitted to a fresh podsched, all but one then cancelled "
                 "(0: no memory phase)");
  app.add_option("--rss-array-size", rss_array_size, "tasks per array of the memory phase")
      ->check(CLI::Range(1, 10000));
  app.add_option("--pass-submits", pass_submits,
                 "submissions of the pass-under-reads phase (one client), per reader count");
  CLI11_PARSE(app, argc, argv);

  curl_global_init(CURL_GLOBAL_DEFAULT);
  Podsched server;
  if (!server.Start(podsched)) return 1;
  const std::string base = server.base, token = server.token;
  std::cout << "podsched at " << base << ", data in " << server.dir.string() << "\n";

  int submitted = 0;
  for (int clients : {1, 8, 64}) {
    Result r = Run(base, token, clients, submits, Kind::kSubmit);
    submitted += submits + clients;
    std::printf("submit c=%-2d n=%d: %.0f submits/s, p50 %.2f ms, p99 %.2f ms, errors %d\n",
                clients, submits, submits / r.seconds, Percentile(r.latencies_ms, 0.5),
                Percentile(r.latencies_ms, 0.99), r.errors);
    std::printf("FIGURE daemon_submit_per_s_c%d %.1f submits/s\n", clients, submits / r.seconds);
    std::printf("FIGURE daemon_submit_with_connect_per_s_c%d %.1f submits/s\n", clients,
                submits / r.seconds_with_connect);
    std::printf("FIGURE daemon_submit_p50_c%d %.3f ms\n", clients, Percentile(r.latencies_ms, 0.5));
    std::printf("FIGURE daemon_submit_p99_c%d %.3f ms\n", clients,
                Percentile(r.latencies_ms, 0.99));
  }
  if (stored > submitted) {
    Result fill = Run(base, token, 64, stored - submitted, Kind::kSubmit);
    std::printf("filled the store to %d jobs in %.1f s (%d errors)\n", stored, fill.seconds,
                fill.errors);
  }
  for (int clients : {1, 8, 64}) {
    Result r = Run(base, token, clients, lists, Kind::kList);
    std::printf(
        "list c=%-2d n=%d (%d jobs stored, page of 100): %.0f lists/s, p50 %.2f ms, "
        "p99 %.2f ms, errors %d\n",
        clients, lists, std::max(stored, submitted), lists / r.seconds,
        Percentile(r.latencies_ms, 0.5), Percentile(r.latencies_ms, 0.99), r.errors);
    std::printf("FIGURE daemon_list_per_s_c%d %.1f lists/s\n", clients, lists / r.seconds);
    std::printf("FIGURE daemon_list_with_connect_per_s_c%d %.1f lists/s\n", clients,
                lists / r.seconds_with_connect);
    std::printf("FIGURE daemon_list_p50_c%d %.3f ms\n", clients, Percentile(r.latencies_ms, 0.5));
    std::printf("FIGURE daemon_list_p99_c%d %.3f ms\n", clients, Percentile(r.latencies_ms, 0.99));
  }
  for (int clients : {1, 8, 64}) {
    Result r = Run(base, token, clients, lists, Kind::kGet, std::max(stored, submitted));
    std::printf("get c=%-2d n=%d (one job by id): %.0f gets/s, p50 %.2f ms, p99 %.2f ms, errors %d\n",
                clients, lists, lists / r.seconds, Percentile(r.latencies_ms, 0.5),
                Percentile(r.latencies_ms, 0.99), r.errors);
    std::printf("FIGURE daemon_get_per_s_c%d %.1f gets/s\n", clients, lists / r.seconds);
    std::printf("FIGURE daemon_get_p99_c%d %.3f ms\n", clients, Percentile(r.latencies_ms, 0.99));
  }
  // Do reads slow the scheduling passes? Every submission leaves the core dirty, so a pass over
  // the queue follows each burst; the same submissions run with no reader, then with 64.
  for (int readers : {0, 64}) {
    const PassHistogram before = ReadPasses(base);
    std::atomic<bool> stop = false;
    Result reads;
    std::thread reading;
    if (readers > 0) {
      reading = std::thread([&] { reads = Run(base, token, readers, 0, Kind::kList, 1, &stop); });
    }
    Result r = Run(base, token, 1, pass_submits, Kind::kSubmit);
    stop = true;
    if (reading.joinable()) reading.join();
    const PassHistogram after = ReadPasses(base);
    const double passes = after.count - before.count;
    double p99 = 0;  // the upper bound of the bucket holding the 99th percentile
    for (size_t i = 0; passes > 0 && i < after.buckets.size() && i < before.buckets.size(); ++i) {
      if (after.buckets[i].second - before.buckets[i].second >= 0.99 * passes) {
        p99 = after.buckets[i].first;
        break;
      }
    }
    const double mean_ms = passes > 0 ? 1000 * (after.sum - before.sum) / passes : 0;
    std::printf(
        "passes with %d readers: %.0f passes, mean %.2f ms, p99 <= %.2f ms; %d submissions "
        "p99 %.2f ms; %.0f lists/s\n",
        readers, passes, mean_ms, 1000 * p99, pass_submits, Percentile(r.latencies_ms, 0.99),
        reads.seconds > 0 ? reads.latencies_ms.size() / reads.seconds : 0.0);
    std::printf("FIGURE daemon_pass_mean_readers%d %.3f ms\n", readers, mean_ms);
    std::printf("FIGURE daemon_pass_p99_bucket_readers%d %.2f ms\n", readers, 1000 * p99);
    std::printf("FIGURE daemon_submit_p99_readers%d %.3f ms\n", readers,
                Percentile(r.latencies_ms, 0.99));
  }
  server.Stop();
  if (rss_arrays > 0 && !Memory(podsched, rss_arrays, rss_array_size)) return 1;
  std::fflush(stdout);
  return 0;
}
