#include "common/big_buffer.h"

#include <sys/mman.h>

#include <cstdint>

namespace podsched {

void HintHugePages(void* data, size_t size) {
  constexpr uintptr_t kHuge = 2 << 20;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void ReserveBig(std::string& s, size_t capacity) {
  s.reserve(capacity);
  if (capacity >= (4u << 20)) HintHugePages(s.data(), s.capacity());
}

}  // namespace podsched
