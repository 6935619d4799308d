// `podsim gen`: writes a synthetic trace (podsim CSV) to stdout or a file.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "scheduler/sim/commands.h"
#include "scheduler/sim/generator.h"
#include "scheduler/sim/trace.h"

namespace podsched::sim {
namespace {

struct GenFlags {
  int64_t jobs = 1000;
  uint64_t seed = 1;
  std::string mix = "grant";
  double load = 0.9;
  int users = 20;
  double arrays = 0;
  double chains = 0;
  double fails = 0;
  double multislice = 0;
  std::string out;
};

void RunGen(const GenFlags& flags) {
  auto mix = ParseMix(flags.mix);
  if (!mix) {
    std::cerr << "podsim gen: " << mix.error().message() << "\n";
    throw CLI::RuntimeError(2);
  }
  if (flags.jobs < 0 || flags.load <= 0 || flags.users < 1) {
    std::cerr << "podsim gen: --jobs must be >= 0, --load > 0 and --users >= 1\n";
    throw CLI::RuntimeError(2);
  }
  for (double share : {flags.arrays, flags.chains, flags.fails, flags.multislice}) {
    if (share < 0 || share > 1) {
      std::cerr << "podsim gen: --arrays, --chains, --fails and --multislice are shares in 0..1\n";
      throw CLI::RuntimeError(2);
    }
  }
  if (*mix == Mix::kBursts && (flags.arrays > 0 || flags.chains > 0 || flags.fails > 0)) {
    std::cerr << "podsim gen: --arrays, --chains and --fails do not apply to --mix bursts\n";
    throw CLI::RuntimeError(2);
  }
  const auto jobs = Generate({flags.jobs, flags.seed, *mix, flags.load, flags.users, flags.arrays,
                              flags.chains, flags.fails, flags.multislice});
  if (flags.out.empty() || flags.out == "-") {
    WritePodsimCsv(jobs, std::cout);
    return;
  }
  std::ofstream file(flags.out);
  WritePodsimCsv(jobs, file);
  file.close();
  if (!file) {
    std::cerr << "podsim gen: cannot write " << flags.out << "\n";
    throw CLI::RuntimeError(1);
  }
}

}  // namespace

void RegisterGenCommand(CLI::App& app) {
  auto flags = std::make_shared<GenFlags>();
  CLI::App* sub = app.add_subcommand(
      "gen", "Write a synthetic trace in the podsim CSV format (grant: research-grant users "
             "with v2-8s; slices: a mix of pod slices; gangs: small jobs and a few users' large gangs; bursts: sweeps submitted in bursts, gangs "
             "and jobs of up to 14 days; frag: short preemptible v2-8s leaving scattered holes "
             "among which on-demand blocks wait, for replay --defrag-budget)");
  sub->add_option("--jobs", flags->jobs, "number of jobs")->capture_default_str();
  sub->add_option("--seed", flags->seed, "random seed")->capture_default_str();
  sub->add_option("--mix", flags->mix, "grant, slices, gangs, bursts or frag")->capture_default_str();
  sub->add_option("--load", flags->load, "offered load as a fraction of one v2 pod's 512 cores")
      ->capture_default_str();
  sub->add_option("--users", flags->users, "number of users")->capture_default_str();
  sub->add_option("--arrays", flags->arrays,
                  "share of submissions that are job arrays of 2..16 tasks (half throttled %4)")
      ->capture_default_str();
  sub->add_option("--chains", flags->chains,
                  "share of submissions that depend (afterok) on the user's previous one")
      ->capture_default_str();
  sub->add_option("--fails", flags->fails, "share of jobs that fail (their dependents cancel)")
      ->capture_default_str();
  sub->add_option("--multislice", flags->multislice,
                  "share of jobs that ask for 2, 4 or 8 slices of their type (column slices; "
                  "replay on a fleet, e.g. --fleet deploy/fleets/grant.yaml)")
      ->capture_default_str();
  sub->add_option("-o,--out", flags->out, "output file (default: stdout)");
  sub->callback([flags] { RunGen(*flags); });
}

}  // namespace podsched::sim
