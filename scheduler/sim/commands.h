// podsim's subcommands. Each lives in its own <name>_command.cc and registers itself, with its
// options and its callback, on the application; podsim_main.cc calls every Register function.
// Adding a subcommand is one new file, one declaration here and one call in main.
//
// A callback that fails prints its message to stderr and throws CLI::RuntimeError(exit_code),
// which CLI11_PARSE turns into podsim's exit status.
#pragma once

namespace CLI {
class App;
}

namespace podsched::sim {

// `podsim place`: placement on one pod, request by request, with the host grid drawn.
void RegisterPlaceCommand(CLI::App& app);
// `podsim replay`: a trace through the scheduling core under several policies, side by side.
void RegisterReplayCommand(CLI::App& app);
// `podsim gen`: a synthetic trace (grant or slices mix).
void RegisterGenCommand(CLI::App& app);

}  // namespace podsched::sim
