// podsim: the simulator's command-line entry point. Subcommands live in *_command.cc.
#include <CLI/CLI.hpp>
#include <string_view>

#include "common/big_buffer.h"
#include "scheduler/sim/commands.h"

int main(int argc, char** argv) {
  // A replay's job table grows to hundreds of MB: on huge pages (common/big_buffer.h). Not for
  // gen and place, which the restart would only slow down.
  if (argc > 1 && std::string_view(argv[1]) == "replay") podsched::RestartWithHugePageHeap(argv);
  CLI::App app{"podsim: simulate a TPU pod scheduler (placement demo, trace replay)"};
  app.require_subcommand(1);
  podsched::sim::RegisterPlaceCommand(app);
  podsched::sim::RegisterReplayCommand(app);
  podsched::sim::RegisterGenCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
