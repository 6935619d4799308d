// `podsim place`: feeds requests to one pod under one or both placement policies and draws the
// host grid after every step. The logic is pod::PlacementSession; this file parses options and
// prints.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "pod/render.h"
#include "pod/session.h"
#include "scheduler/sim/commands.h"

namespace podsched::sim {
namespace {

struct PlaceOptions {
  std::string pod = "v2";
  std::string policy = "both";
  bool no_color = false;
  bool demo = false;
  std::vector<std::string> requests;
};

struct DemoStep {
  const char* request;
  const char* note;
};

// Shows both policies side by side on a v2 pod, including a slice best-fit places and
// first-fit cannot (the sequence of pod/placement_test.cc's BestFitPlacesWhatFirstFitCannot).
constexpr DemoStep kDemo[] = {
    {"v2-8", "a one-host slice: both policies take the top-left corner"},
    {"v2-256", "a 4x8-host slice: first-fit takes the first legal position (rotated, at column\n"
               "   1); best-fit the position aligned to its size, against the right edge"},
    {"v2-128", "a 4x4: first-fit has 31 free hosts but no 4x4 block, so it waits;\n"
               "   best-fit kept the left half whole"},
    {"v2-32", "a 2x2: on first-fit it queues behind the waiting v2-128 (FIFO, no overtaking)"},
    {"-2", "the v2-256 finishes: first-fit places its waiting slices"},
    {"v2-256", "another 4x8: first-fit across the bottom, best-fit in the right half"},
    {"fail:56", "host 56 fails while allocated: it stays in its slice, marked X, until the\n"
                "   slice is released and the host healed"},
    {"v2-32", "a 2x2: first-fit takes the first hole; best-fit the hole beside the other 2x2"},
    {"v2-32", "another 2x2: first-fit has 7 free hosts but no 2x2 block; best-fit fits it"},
    {"drain:0", "host 0 is drained for maintenance: its v2-8 keeps running"},
    {"-1", "the v2-8 finishes; the drained host takes no new work (D)"},
    {"-5", "the second v2-256 finishes: compare the largest placeable slice and fragmentation"},
};

void Fail(const std::string& message) {
  std::fprintf(stderr, "podsim place: %s\n", message.c_str());
  throw CLI::RuntimeError(2);
}

std::vector<pod::PlacementSession> MakeSessions(const PlaceOptions& o) {
  Result<pod::Pod> pod = pod::ParsePodSpec(o.pod);
  if (!pod) Fail(pod.error().message());
  std::vector<std::string_view> names;
  if (o.policy == "both") {
    names = pod::PlacementPolicyNames();
  } else {
    names.push_back(o.policy);
  }
  std::vector<pod::PlacementSession> sessions;
  for (std::string_view name : names) {
    Result<std::unique_ptr<pod::PlacementPolicy>> policy = pod::MakePlacementPolicy(name);
    if (!policy) Fail(policy.error().message() + " (or both)");
    sessions.emplace_back(*pod, std::move(*policy));
  }
  return sessions;
}

std::string Stats(const pod::Pod& p) {
  const std::optional<pod::AcceleratorType> largest = p.LargestPlaceableType();
  char buf[128];
  std::snprintf(buf, sizeof buf, "largest %s  frag %.2f  util %.2f",
                largest ? largest->ToString().c_str() : "none", p.Fragmentation(),
                p.Utilization());
  return buf;
}

void PrintLines(const std::vector<std::string>& lines) {
  for (const std::string& l : lines) std::printf("%s\n", l.c_str());
}

void PrintState(const std::vector<pod::PlacementSession>& sessions, bool color) {
  const pod::RenderOptions render{.color = color, .labels = {}};
  std::vector<std::vector<std::string>> blocks;
  for (const pod::PlacementSession& s : sessions) {
    std::vector<std::string> block{"[" + std::string(s.policy().name()) + "]"};
    for (std::string& l : pod::RenderGrid(s.pod(), render)) block.push_back(std::move(l));
    block.push_back(Stats(s.pod()));
    blocks.push_back(std::move(block));
  }
  PrintLines(pod::SideBySide(blocks, 6));
  if (sessions.size() == 1) {
    std::vector<std::string> legend = pod::RenderLegend(sessions[0].pod(), render);
    legend.pop_back();  // the symbol key was printed at the start
    PrintLines(legend);
  }
}

void RunPlace(const PlaceOptions& o) {
  if (o.demo && !o.requests.empty()) Fail("--demo takes no requests");
  if (!o.demo && o.requests.empty()) Fail("give requests (e.g. v2-32 -1 fail:5) or --demo");
  PlaceOptions opts = o;
  if (o.demo) {
    opts.pod = "v2";
    opts.policy = "both";
  }
  std::vector<pod::PlacementSession> sessions = MakeSessions(opts);
  const bool color = !o.no_color && std::getenv("NO_COLOR") == nullptr && isatty(STDOUT_FILENO);

  std::vector<pod::ScriptRequest> requests;
  std::vector<const char*> notes;
  if (o.demo) {
    for (const DemoStep& step : kDemo) {
      requests.push_back(pod::ParseRequest(step.request, sessions[0].pod()).value());
      notes.push_back(step.note);
    }
  } else {
    for (const std::string& text : o.requests) {
      Result<pod::ScriptRequest> r = pod::ParseRequest(text, sessions[0].pod());
      if (!r) Fail(r.error().message());
      requests.push_back(*r);
      notes.push_back(nullptr);
    }
  }

  const pod::Pod& p = sessions[0].pod();
  std::printf("pod %s: %s, %dx%d hosts (%d chips, %d TensorCores)\n", opts.pod.c_str(),
              std::string(pod::SpecOf(p.generation()).name).c_str(), p.host_rows(),
              p.host_cols(), p.num_hosts() * 4, p.num_hosts() * 8);
  std::printf("key: letters are allocations (A = 1, B = 2, C = 3, E = 4, ...), . free, "
              "X unhealthy, D draining; host id = row start + column\n");
  for (size_t i = 0; i < requests.size(); ++i) {
    std::printf("\n== step %zu: %s\n", i + 1, requests[i].text.c_str());
    if (notes[i] != nullptr) std::printf(" # %s\n", notes[i]);
    for (pod::PlacementSession& s : sessions) {
      for (const std::string& line : s.Apply(requests[i])) {
        std::printf("  %-9s %s\n", sessions.size() > 1 ? std::string(s.policy().name()).c_str() : "",
                    line.c_str());
      }
    }
    PrintState(sessions, color);
  }
  std::printf("\n");
  for (const pod::PlacementSession& s : sessions) {
    std::printf("%s: %d of the allocation requests had to wait, %zu still waiting\n",
                std::string(s.policy().name()).c_str(), s.requests_waited(), s.waiting().size());
  }
}

}  // namespace

void RegisterPlaceCommand(CLI::App& app) {
  auto opts = std::make_shared<PlaceOptions>();
  CLI::App* sub = app.add_subcommand(
      "place", "Place slices on a pod request by request and draw the host grid");
  sub->add_option("--pod", opts->pod, "v2, v3, or a smaller grid: v2:4x4, v3:4x8, 4x4")
      ->capture_default_str();
  sub->add_option("--policy", opts->policy, "first-fit, best-fit or both")
      ->capture_default_str();
  sub->add_flag("--no-color", opts->no_color, "plain text (also when NO_COLOR is set)");
  sub->add_flag("--demo", opts->demo,
                "a built-in sequence on a v2 pod showing both policies side by side");
  sub->add_option("requests", opts->requests,
                  "v2-32 (allocate), -N (release allocation N), fail:H, heal:H, drain:H, "
                  "undrain:H (host H)");
  sub->callback([opts] { RunPlace(*opts); });
}

}  // namespace podsched::sim
