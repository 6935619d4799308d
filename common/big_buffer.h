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
