// Buffers for whole objects (hundreds of MB). In fresh memory the kernel's page faults, not the
// copy, dominate reading an object: measured here 16k faults for 64 MiB, ~0.5 s; with
// transparent huge pages ~30 faults and ~25 ms. So big buffers ask for huge pages
// (MADV_HUGEPAGE; works when THP is "madvise" or "always") and are not zero-filled first.
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"

namespace podsched {

// Hints that the part of [data, data + size) made of whole 2 MiB pages should use huge pages.
// A no-op for small buffers or when the kernel says no.
void HintHugePages(void* data, size_t size);

// Starts this program again in the same process (execve of /proc/self/exe with the same
// arguments, so the same pid) with glibc's malloc asking for transparent huge pages for the heap
// it grows (the tunable glibc.malloc.hugetlb=1, added to GLIBC_TUNABLES), when the kernel offers
// them ("madvise" or "always"). Returns without restarting when the environment already sets that
// tunable (GLIBC_TUNABLES=glibc.malloc.hugetlb=0 opts out), under valgrind (which an exec would
// leave), or when the exec fails: the program then runs on 4 KiB pages, only slower.
//
// Why: a program whose heap grows to hundreds of MB (podsim's job table; the daemon's) spends its
// time in the kernel's page faults on this kind of VM: podsim's 100k-job trace took 34,000 faults
// and 3.0-3.3 s at a busy moment, with huge pages 3,300 faults and 2.6-2.7 s
// (docs/bench-scheduler.md). Call it before threads, files or sockets: first in main, or right
// after parsing the command line, for the commands that run long (it doubles a start). The
// variable stays set for the process, so it is for programs that start no others.
void RestartWithHugePageHeap(char** argv);

// Reserves `capacity` in `s` and applies HintHugePages to the new storage.
void ReserveBig(std::string& s, size_t capacity);

// A string of exactly `size` bytes written by `fill(data, size)` (no zero-fill first); the
// error of `fill` if it fails.
template <typename Fill>
Result<std::string> FillString(size_t size, Fill&& fill) {
  std::string out;
  ReserveBig(out, size);
  Status status;
  out.resize_and_overwrite(size, [&](char* data, size_t n) {
    status = fill(data, n);
    return status.ok() ? n : 0;
  });
  if (!status.ok()) return std::unexpected(status);
  return out;
}

}  // namespace podsched
