// podsim: the simulator's command-line entry point. Subcommands live in *_command.cc.
#include <CLI/CLI.hpp>

#include "common/big_buffer.h"
#include "scheduler/sim/commands.h"

int main(int argc, char** argv) {
  podsched::RestartWithHugePageHeap(argv);  // a replay's job table grows to hundreds of MB
  CLI::App app{"podsim: simulate a TPU pod scheduler (placement demo, trace replay)"};
  app.require_subcommand(1);
  podsched::sim::RegisterPlaceCommand(app);
  podsched::sim::RegisterReplayCommand(app);
  podsched::sim::RegisterGenCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
