// Bus messages into the scheduler's bus logic (BusLogic::OnMessage), against a fresh 4x4-host v2
// pod per input whose four agents ("a0".."a3", one per host row) have registered and whose
// v2-32 job is placed on two of them, so that reports about a live job reach the core.
//
// Input: one byte choosing the sending agent (0-3; anything else is an unknown agent), then the
// serialized bus::Envelope. A timer tick and the core's next pass follow the message.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "pod/pod.h"
#include "scheduler/core/repository.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/daemon/bus_logic.h"

using namespace podsched;

namespace {

bus::Envelope RegisterMsg(int row) {
  bus::Envelope e;
  auto* r = e.mutable_register_();
  r->set_agent_id("a" + std::to_string(row));
  r->set_pod("pod0");
  for (int c = 0; c < 4; ++c) r->add_hosts(row * 4 + c);
  r->set_rsh_endpoint("tcp://127.0.0.1:" + std::to_string(40000 + row));
  return e;
}

core::JobSpec V232Spec() {
  core::JobSpec spec;
  spec.name = "fuzz";
  spec.user = UserName("alice");
  spec.accelerator = "v2-32";
  spec.command = "/bin/true";
  spec.grace_period = std::chrono::seconds(30);
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  TimePoint now{};
  core::InMemoryJobRepository repo;
  core::SchedulerConfig config;
  config.min_runtime_before_preemption = Duration::zero();
  auto sched = core::Scheduler::Create(pod::Pod::Create("pod0", pod::Generation::kV2, 4, 4).value(),
                                       config, &repo, now);
  if (!sched) __builtin_trap();
  daemon::BusLogic::Options options;
  options.bus.heartbeat_timeout_ms = 3000;
  options.checkpoint_stores = daemon::CheckpointStores("file:///data/objects/checkpoints", {});
  options.log_url = "file:///data/objects/logs";
  options.scheduler_id = "s1";
  int tokens = 0;
  daemon::BusLogic bus(options, sched->get(),
                       [&tokens] { return "tok" + std::to_string(++tokens); });
  if (!bus.Start(now).ok()) __builtin_trap();
  for (int row = 0; row < 4; ++row) {
    if (!bus.OnMessage("a" + std::to_string(row), RegisterMsg(row).SerializeAsString(), now).ok()) {
      __builtin_trap();
    }
  }
  if (!(*sched)->Submit(V232Spec(), now)) __builtin_trap();
  now += std::chrono::milliseconds(10);
  bus.Dispatch((*sched)->Tick(now));
  (void)bus.TakeOutgoing();

  const std::string agent = data[0] < 4 ? "a" + std::to_string(data[0]) : "zz";
  const std::string_view message(reinterpret_cast<const char*>(data) + 1, size - 1);
  // Errors are the core's commit failures; the in-memory store has none.
  if (!bus.OnMessage(agent, message, now).ok()) __builtin_trap();
  now += std::chrono::milliseconds(10);
  if (!bus.OnTimer(now).ok()) __builtin_trap();
  if (!bus.reconciling()) bus.Dispatch((*sched)->Tick(now));
  (void)bus.TakeOutgoing();
  (void)bus.TakeAcks();
  (void)bus.TakeDueProgress(now);
  return 0;
}
