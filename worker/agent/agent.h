// podworker's agent: one thread, one zmq_poll over the bus DEALER and raw fds (progress UDP
// socket, rsh listener and connections, child pipes, a signalfd for SIGCHLD/SIGTERM/SIGINT, the
// output spool's eventfd), wiring JobRunner (jobs and their processes), RshServer (the rsh side
// channel) and OutputSpool (stored output, copied to the object store on a thread of its own).
// Behaviour: docs/bus.md; design and known gaps: docs/podworker.md.
#pragma once

#include "worker/agent/agent_options.h"

namespace podsched::agent {

// Runs until SIGTERM/SIGINT (then SIGKILLs everything it started). Returns the exit code.
int RunAgent(const AgentOptions& options);

}  // namespace podsched::agent
