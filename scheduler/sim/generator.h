// Synthetic traces for podsim.
//
//   grant:  research-grant users (5 on-demand + 100 preemptible v2-8 each, the default quota):
//           only v2-8 jobs, 75% preemptible, durations log-normal (median 1 h, capped at 72 h)
//   slices: pod-slice work: v2-8 50%, v2-32 30%, v2-128 15%, v2-256 4%, v2-512 1%; half
//           preemptible; 10% at priority 1; durations log-normal (median 1 h, capped at 72 h)
//   gangs:  a Philly-like cluster with large gangs: 85% small jobs (v2-8 80%, v2-32 20%) from
//           every user, 15% gangs (v2-128 60%, v2-256 30%, v2-512 10%: 64- to 512-GPU jobs) from
//           the first fifth of the users; 30% preemptible
//   bursts: the shape of larger clusters than the 2017 Philly file (Philly's later months,
//           SenseTime's Helios): 60% of submissions are one user's burst within a minute (10-100
//           small jobs, or 2-8 gangs), the rest single; 20% gangs (v2-128..v2-512); durations
//           heavy-tailed (log-normal, median 2 h, capped at 14 days); half preemptible. The
//           sweep options below do not apply to it.
//   frag:   what defragmentation is for (`replay --defrag-budget`): preemptible v2-8 jobs (98%,
//           short: median 20 min, capped at 4 h) churn and leave scattered free hosts, among
//           which on-demand v2-32 (1.4%) and v2-128 (0.6%) jobs (median 1 h, about a third of
//           the load) need a free block.
// Arrivals are Poisson with a rate that offers about `load` x one v2 pod's 512 cores. Every job
// checkpoints every 30 minutes. Deterministic for a seed.
//
// Sweeps and pipelines (off by default; then the trace is the same as without them): a share
// `arrays` of the submissions are job arrays of 2..16 tasks (half of them throttled to 4), a
// share `chains` depend (afterok) on the same user's previous submission, so that chains of
// dependent jobs form, and a share `fails` of the jobs fail (their afterok dependents then end
// CANCELLED). Every job gets a job_id. An array of N tasks counts as N arrivals for the load.
// `multislice` adds to the load (the arrival rate is that of single slices).
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "scheduler/sim/trace.h"

namespace podsched::sim {

enum class Mix { kGrant, kSlices, kGangs, kBursts, kFrag };
Result<Mix> ParseMix(std::string_view name);  // "grant", "slices", "gangs", "bursts", "frag"

struct GenOptions {
  int64_t jobs = 1000;
  uint64_t seed = 1;
  Mix mix = Mix::kGrant;
  double load = 0.9;  // offered cores / 512
  int users = 20;
  double arrays = 0;  // share of submissions that are job arrays
  double chains = 0;  // share of submissions that depend on the user's previous one
  double fails = 0;   // share of jobs that fail
  // Share of jobs that ask for 2, 4 or 8 slices of their type (multislice, column `slices`),
  // drawn apart from everything else: the other columns are those of the trace without it.
  double multislice = 0;
};

std::vector<TraceJob> Generate(const GenOptions& options);

}  // namespace podsched::sim
