#include "common/big_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace podsched {

void HintHugePages(void* data, size_t size) {
  constexpr uintptr_t kHuge = 2 << 20;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void RestartWithHugePageHeap(char** argv) {
  constexpr const char* kTunable = "glibc.malloc.hugetlb";
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::string(tunables).find(kTunable) != std::string::npos) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::string(preload).find("vgpreload") != std::string::npos) return;
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  if (!std::getline(thp, modes) || modes.find("[never]") != std::string::npos) return;
  const std::string before = tunables != nullptr ? tunables : "";
  const std::string with = (before.empty() ? "" : before + ":") + kTunable + "=1";
  if (::setenv("GLIBC_TUNABLES", with.c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // Not restarted: run as before, with the environment as it was.
  if (tunables != nullptr) {
    ::setenv("GLIBC_TUNABLES", before.c_str(), 1);
  } else {
    ::unsetenv("GLIBC_TUNABLES");
  }
}

void ReserveBig(std::string& s, size_t capacity) {
  s.reserve(capacity);
  if (capacity >= (4u << 20)) HintHugePages(s.data(), s.capacity());
}

}  // namespace podsched
