// bench_bus: speaks the worker bus (docs/bus.md) to a running podsched as many simulated agents.
//
//   bench_bus load --bus tcp://127.0.0.1:PORT --agents 128 --hosts-per-agent 2 --seconds 5
//     Registers the agents (each a DEALER), then, in rounds, every agent sends --batch heartbeats
//     followed by an Exited for a job that does not exist; podsched answers that one with an Ack
//     after the commit that follows the batch, so when every agent has its Ack, every heartbeat
//     before it was processed. Prints FIGURE bus_heartbeats_per_s (sustained, end to end).
//
//   bench_bus fuzz --bus tcp://127.0.0.1:PORT --pod pod0 --host H
//     Sends bad messages of every kind (random bytes, empty, unknown agent, unknown host, wrong
//     epoch, unknown job, oversized Log, a message over ZMQ_MAXMSGSIZE) and prints how many of
//     each it sent ("SENT reason n"). The test checks podsched's /metrics against them.
//
//   bench_bus flood --bus tcp://127.0.0.1:PORT --pod pod0 --flood-host 0 --quiet-hosts 7
//     The audit's H2 from a peer that does not hold back: a "flood" agent registers the flood
//     host alone and prints READY; the first job launched on it is reported running, then
//     --quiet-hosts agents (hosts flood-host+1 ...) register, and for --seconds the flood agent
//     sends that job 64 KiB Log messages of empty lines as fast as podsched's socket takes them
//     (each a 65,536-line append on podsched's thread), while every agent heartbeats every
//     --heartbeat-ms. Prints "SENT log n" and "SENT heartbeat n".
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bus.pb.h"

namespace bus = podsched::bus;
using Clock = std::chrono::steady_clock;

namespace {

std::string Serialize(const bus::Envelope& e) { return e.SerializeAsString(); }

zmq::socket_t Dealer(zmq::context_t& ctx, const std::string& id, const std::string& address) {
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::routing_id, id);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::sndhwm, 0);
  s.connect(address);
  return s;
}

bus::Envelope Register(const std::string& id, const std::string& pod, int first, int count) {
  bus::Envelope e;
  auto* r = e.mutable_register_();
  r->set_agent_id(id);
  r->set_pod(pod);
  for (int h = first; h < first + count; ++h) r->add_hosts(h);
  r->set_rsh_endpoint("tcp://127.0.0.1:1");
  r->set_hostname("bench");
  r->set_version("bench_bus");
  return e;
}

// Receives until a message of `want` arrives (or the deadline).
bool Await(zmq::socket_t& s, bus::Envelope::BodyCase want, Clock::time_point deadline) {
  while (Clock::now() < deadline) {
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(50));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    zmq::message_t m;
    if (!s.recv(m, zmq::recv_flags::dontwait)) continue;
    bus::Envelope e;
    if (e.ParseFromArray(m.data(), static_cast<int>(m.size())) && e.body_case() == want) {
      return true;
    }
  }
  return false;
}

int Load(const std::string& address, const std::string& pod, int agents, int hosts_per_agent,
         int first_host, double seconds, int batch) {
  zmq::context_t ctx(2);
  std::vector<zmq::socket_t> dealers;
  std::vector<std::string> ids;
  for (int i = 0; i < agents; ++i) {
    ids.push_back("load-" + std::to_string(i));
    dealers.push_back(Dealer(ctx, ids.back(), address));
    dealers.back().send(zmq::buffer(Serialize(
        Register(ids.back(), pod, first_host + i * hosts_per_agent, hosts_per_agent))));
  }
  auto deadline = Clock::now() + std::chrono::seconds(30);
  for (int i = 0; i < agents; ++i) {
    if (!Await(dealers[i], bus::Envelope::kWelcome, deadline)) {
      std::fprintf(stderr, "bench_bus: agent %s got no Welcome (pod %s big enough?)\n",
                   ids[i].c_str(), pod.c_str());
      return 1;
    }
  }
  std::vector<std::string> heartbeats, barriers;
  for (int i = 0; i < agents; ++i) {
    bus::Envelope hb;
    hb.mutable_heartbeat()->set_agent_id(ids[i]);
    heartbeats.push_back(Serialize(hb));
    bus::Envelope x;
    x.mutable_exited()->mutable_job()->set_job_id(int64_t{1} << 50);  // no such job: Ack only
    x.mutable_exited()->mutable_job()->set_epoch(1);
    x.mutable_exited()->set_reason(bus::Exited::RELEASED);
    x.mutable_exited()->add_hosts(first_host + i * hosts_per_agent);
    barriers.push_back(Serialize(x));
  }
  int64_t sent = 0, rounds = 0;
  auto start = Clock::now();
  auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end || rounds == 0) {
    for (int i = 0; i < agents; ++i) {
      for (int b = 0; b < batch; ++b) dealers[i].send(zmq::buffer(heartbeats[i]));
      dealers[i].send(zmq::buffer(barriers[i]));
      sent += batch;
    }
    auto round_deadline = Clock::now() + std::chrono::seconds(60);
    for (int i = 0; i < agents; ++i) {
      if (!Await(dealers[i], bus::Envelope::kAck, round_deadline)) {
        std::fprintf(stderr, "bench_bus: no Ack for %s within 60 s\n", ids[i].c_str());
        return 1;
      }
    }
    ++rounds;
  }
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("agents %d x %d hosts, %lld heartbeats in %lld rounds, %.2f s\n", agents,
              hosts_per_agent, static_cast<long long>(sent), static_cast<long long>(rounds),
              elapsed);
  double rate = sent / elapsed;
  std::printf("FIGURE bus_heartbeats_per_s %.0f 1/s\n", rate);
  // Each host heartbeats once per second by default: the hosts one podsched can serve.
  std::printf("FIGURE bus_hosts_at_1hz %.0f hosts\n", rate * hosts_per_agent);
  return 0;
}

int Fuzz(const std::string& address, const std::string& pod, int host, int seed, int64_t job) {
  zmq::context_t ctx(1);
  std::mt19937 rng(seed);
  std::map<std::string, int> sent;
  // A registered agent, so that its later messages reach the checks past "unknown agent".
  zmq::socket_t agent = Dealer(ctx, "fuzz-agent", address);
  agent.send(zmq::buffer(Serialize(Register("fuzz-agent", pod, host, 1))));
  if (!Await(agent, bus::Envelope::kWelcome, Clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "bench_bus: fuzz agent not welcomed\n");
    return 1;
  }
  for (int i = 0; i < 50; ++i) {  // random bytes (never an Envelope with a body)
    std::string junk(1 + rng() % 300, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    junk[0] = 0x07;  // field 0, wire type 7: invalid, so it never parses
    agent.send(zmq::buffer(junk));
    ++sent["malformed"];
  }
  agent.send(zmq::buffer(std::string()));
  ++sent["malformed"];
  {
    zmq::socket_t stranger = Dealer(ctx, "fuzz-stranger", address);
    bus::Envelope hb;
    hb.mutable_heartbeat()->set_agent_id("fuzz-stranger");
    stranger.send(zmq::buffer(Serialize(hb)));
    ++sent["unknown_agent"];
    if (!Await(stranger, bus::Envelope::kReregister, Clock::now() + std::chrono::seconds(10))) {
      std::fprintf(stderr, "bench_bus: the stranger got no Reregister\n");
      return 1;
    }
    stranger.send(zmq::buffer(Serialize(Register("fuzz-stranger", pod, 100000, 1))));
    ++sent["unknown_host"];
  }
  bus::Envelope p;
  p.mutable_progress()->mutable_job()->set_job_id(int64_t{1} << 40);
  p.mutable_progress()->mutable_job()->set_epoch(1);
  agent.send(zmq::buffer(Serialize(p)));
  ++sent["unknown_job"];
  if (job > 0) {  // a job that exists, at an epoch it never had
    bus::Envelope stale;
    stale.mutable_progress()->mutable_job()->set_job_id(job);
    stale.mutable_progress()->mutable_job()->set_epoch(1000);
    agent.send(zmq::buffer(Serialize(stale)));
    ++sent["stale_epoch"];
  }
  bus::Envelope log;
  log.mutable_log()->mutable_job()->set_job_id(1);
  log.mutable_log()->mutable_job()->set_epoch(1);
  log.mutable_log()->set_data(std::string(100 << 10, 'x'));
  agent.send(zmq::buffer(Serialize(log)));
  ++sent["oversized"];
  bus::Envelope x;
  x.mutable_exited()->mutable_job()->set_job_id(1);
  x.mutable_exited()->mutable_job()->set_epoch(1);
  x.mutable_exited()->set_reason(bus::Exited::COMPLETED);
  x.mutable_exited()->add_hosts(host + 1);  // not this agent's host
  agent.send(zmq::buffer(Serialize(x)));
  ++sent["unknown_host_exit"];
  bus::Envelope launch;  // scheduler -> agent message sent the wrong way
  launch.mutable_launch()->mutable_job()->set_job_id(1);
  agent.send(zmq::buffer(Serialize(launch)));
  ++sent["invalid"];
  // Over ZMQ_MAXMSGSIZE: the ROUTER drops the connection; podsched must not notice otherwise.
  {
    zmq::socket_t big = Dealer(ctx, "fuzz-big", address);
    big.send(zmq::buffer(std::string((1 << 20) + 100, 'y')));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let it flush before close
    ++sent["over_maxmsgsize"];
  }
  // A barrier: an Exited for an unknown job is Acked after everything before it was handled.
  bus::Envelope barrier;
  barrier.mutable_exited()->mutable_job()->set_job_id(int64_t{1} << 41);
  barrier.mutable_exited()->mutable_job()->set_epoch(1);
  barrier.mutable_exited()->set_reason(bus::Exited::RELEASED);
  barrier.mutable_exited()->add_hosts(host);
  agent.send(zmq::buffer(Serialize(barrier)));
  ++sent["unknown_job"];
  if (!Await(agent, bus::Envelope::kAck, Clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "bench_bus: no Ack after the fuzz messages\n");
    return 1;
  }
  for (const auto& [reason, n] : sent) std::printf("SENT %s %d\n", reason.c_str(), n);
  return 0;
}

bus::Envelope Heartbeat(const std::string& id) {
  bus::Envelope e;
  e.mutable_heartbeat()->set_agent_id(id);
  return e;
}

int Flood(const std::string& address, const std::string& pod, int flood_host, int quiet_hosts,
          double seconds, int heartbeat_ms) {
  zmq::context_t ctx(2);
  zmq::socket_t flood = Dealer(ctx, "flood", address);
  flood.set(zmq::sockopt::sndhwm, 1000);  // bench_bus's own memory: 64 MiB queued at most
  flood.send(zmq::buffer(Serialize(Register("flood", pod, flood_host, 1))));
  if (!Await(flood, bus::Envelope::kWelcome, Clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "bench_bus: the flood agent was not welcomed\n");
    return 1;
  }
  std::printf("READY\n");
  std::fflush(stdout);
  // The job the test submits: launched here, reported running.
  bus::Envelope launch;
  const auto launch_deadline = Clock::now() + std::chrono::seconds(60);
  while (!launch.has_launch() && Clock::now() < launch_deadline) {
    zmq::pollitem_t item{flood.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(50));
    zmq::message_t m;
    if ((item.revents & ZMQ_POLLIN) && flood.recv(m, zmq::recv_flags::dontwait)) {
      if (!launch.ParseFromArray(m.data(), static_cast<int>(m.size()))) launch.Clear();
    }
  }
  if (!launch.has_launch()) {
    std::fprintf(stderr, "bench_bus: no Launch for the flood agent within 60 s\n");
    return 1;
  }
  bus::Envelope flood_hb = Heartbeat("flood");
  auto* running = flood_hb.mutable_heartbeat()->add_running();
  *running->mutable_job() = launch.launch().job();
  running->add_hosts(flood_host);
  running->add_ranks_up_hosts(flood_host);
  running->add_pids(1);
  const std::string flood_heartbeat = Serialize(flood_hb);
  flood.send(zmq::buffer(flood_heartbeat));

  std::vector<zmq::socket_t> quiet;
  std::vector<std::string> quiet_heartbeats;
  for (int i = 0; i < quiet_hosts; ++i) {
    const std::string id = "quiet-" + std::to_string(i);
    quiet.push_back(Dealer(ctx, id, address));
    quiet.back().send(zmq::buffer(Serialize(Register(id, pod, flood_host + 1 + i, 1))));
    quiet_heartbeats.push_back(Serialize(Heartbeat(id)));
  }
  for (int i = 0; i < quiet_hosts; ++i) {
    if (!Await(quiet[i], bus::Envelope::kWelcome, Clock::now() + std::chrono::seconds(10))) {
      std::fprintf(stderr, "bench_bus: quiet agent %d was not welcomed\n", i);
      return 1;
    }
  }
  std::printf("FLOODING\n");
  std::fflush(stdout);

  bus::Envelope log;
  *log.mutable_log()->mutable_job() = launch.launch().job();
  log.mutable_log()->set_data(std::string(64 << 10, '\n'));
  int64_t logs = 0, heartbeats = 0, offset = 0;
  const auto interval = std::chrono::milliseconds(heartbeat_ms);
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(seconds));
  auto next_heartbeat = start;
  while (Clock::now() < end) {
    if (Clock::now() >= next_heartbeat) {
      next_heartbeat += interval;
      flood.send(zmq::buffer(flood_heartbeat), zmq::send_flags::dontwait);
      for (int i = 0; i < quiet_hosts; ++i) quiet[i].send(zmq::buffer(quiet_heartbeats[i]));
      heartbeats += quiet_hosts + 1;
    }
    log.mutable_log()->set_offset(offset);
    if (flood.send(zmq::buffer(Serialize(log)), zmq::send_flags::dontwait)) {
      offset += 64 << 10;
      ++logs;
    } else {
      zmq::pollitem_t item{flood.handle(), 0, ZMQ_POLLOUT, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(5));
    }
    // Drain what podsched sends (Acks, Kills), so that its queue to us never fills.
    zmq::message_t m;
    while (flood.recv(m, zmq::recv_flags::dontwait)) {
    }
    for (auto& q : quiet) {
      while (q.recv(m, zmq::recv_flags::dontwait)) {
      }
    }
  }
  std::printf("SENT log %lld\nSENT heartbeat %lld\n", static_cast<long long>(logs),
              static_cast<long long>(heartbeats));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_bus: simulated podworkers for load, fuzz and flood tests of podsched's bus"};
  app.require_subcommand(1);
  std::string address, pod = "pod0";
  int agents = 128, hosts_per_agent = 2, first_host = 0, batch = 20, host = 0, seed = 1;
  double seconds = 5;
  auto* load = app.add_subcommand("load", "heartbeat throughput");
  load->add_option("--bus", address)->required();
  load->add_option("--pod", pod);
  load->add_option("--agents", agents)->check(CLI::Range(1, 10000));
  load->add_option("--hosts-per-agent", hosts_per_agent)->check(CLI::Range(1, 256));
  load->add_option("--first-host", first_host);
  load->add_option("--seconds", seconds);
  load->add_option("--batch", batch, "heartbeats per agent per round")->check(CLI::Range(1, 10000));
  auto* fuzz = app.add_subcommand("fuzz", "bad messages");
  fuzz->add_option("--bus", address)->required();
  fuzz->add_option("--pod", pod);
  fuzz->add_option("--host", host, "a host for the fuzz agent (host+1 must be in the pod)");
  fuzz->add_option("--seed", seed);
  int64_t job = 0;
  fuzz->add_option("--job", job, "an existing job id (for a wrong-epoch message)");
  int flood_host = 0, quiet_hosts = 7, heartbeat_ms = 300;
  auto* flood = app.add_subcommand("flood", "one agent's Log flood beside quiet agents");
  flood->add_option("--bus", address)->required();
  flood->add_option("--pod", pod);
  flood->add_option("--flood-host", flood_host);
  flood->add_option("--quiet-hosts", quiet_hosts, "agents after the flood host, one host each")
      ->check(CLI::Range(0, 1000));
  flood->add_option("--seconds", seconds);
  flood->add_option("--heartbeat-ms", heartbeat_ms)->check(CLI::Range(10, 60000));
  CLI11_PARSE(app, argc, argv);
  if (flood->parsed()) {
    return Flood(address, pod, flood_host, quiet_hosts, seconds, heartbeat_ms);
  }
  if (load->parsed()) {
    return Load(address, pod, agents, hosts_per_agent, first_host, seconds, batch);
  }
  return Fuzz(address, pod, host, seed, job);
}
