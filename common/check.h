// PODSCHED_CHECK: aborts loudly when an invariant of the program is broken.
//
// Use it for bugs ("a host is in two allocations"), never for bad input: bad input returns a
// Status. It stays on in release builds: a scheduler that keeps running with a corrupt view of
// the pod can give one chip to two jobs.
#pragma once

#include <cstdio>
#include <cstdlib>

#define PODSCHED_CHECK(cond)                                                         \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                 \
    }                                                                               \
  } while (false)

#define PODSCHED_CHECK_MSG(cond, msg)                                                       \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s: %s\n", __FILE__, __LINE__, #cond, msg); \
      std::abort();                                                                        \
    }                                                                                      \
  } while (false)
