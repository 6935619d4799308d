// RestartWithHugePageHeap (big_buffer.h): the program starts again in the same process with
// glibc's malloc told to use huge pages, keeps its arguments and the other tunables, does not
// when told not to, and its heap then grows on huge pages.
//
// The test runs this binary as a child (the flag below), since a restart replaces the process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/big_buffer.h"

namespace {

constexpr const char* kChildFlag = "--huge-page-heap-child";
constexpr const char* kStarts = "HUGE_PAGE_HEAP_TEST_STARTS";

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool ThpOffered() {
  const std::string modes = FirstLine("/sys/kernel/mm/transparent_hugepage/enabled");
  return !modes.empty() && modes.find("[never]") == std::string::npos;
}

// kB of anonymous memory on huge pages in this process.
long AnonHugeKb() {
  std::ifstream in("/proc/self/smaps_rollup");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("AnonHugePages:")) return std::strtol(line.c_str() + 14, nullptr, 10);
  }
  return -1;
}

// The child: counts the times main ran in this process, restarts, reports.
int ChildMain(int argc, char** argv) {
  const char* before = std::getenv(kStarts);
  const int starts = (before != nullptr ? std::atoi(before) : 0) + 1;
  ::setenv(kStarts, std::to_string(starts).c_str(), 1);
  podsched::RestartWithHugePageHeap(argv);
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::printf("starts=%d\npid=%d\ntunables=%s\n", starts, static_cast<int>(::getpid()),
              tunables != nullptr ? tunables : "(unset)");
  std::string args;
  for (int i = 2; i < argc; ++i) args += std::string(i > 2 ? "|" : "") + argv[i];
  std::printf("args=%s\n", args.c_str());
  // A heap grown by many small allocations (malloc's brk heap, not its mmap of large blocks):
  // 64 MiB of 4 KiB pieces, each written.
  std::vector<char*> pieces;
  for (int i = 0; i < 64 * 256; ++i) {
    pieces.push_back(static_cast<char*>(std::malloc(4000)));
    std::memset(pieces.back(), 1, 4000);
  }
  std::printf("anon_huge_kb=%ld\n", AnonHugeKb());
  for (char* p : pieces) std::free(p);
  return 0;
}

struct Child {
  pid_t pid = -1;
  std::map<std::string, std::string> report;
};

// Runs this binary as the child with GLIBC_TUNABLES set to `tunables` (nullptr: unset).
Child RunChild(const char* tunables) {
  int out[2];
  EXPECT_EQ(::pipe(out), 0);
  Child child;
  child.pid = ::fork();
  if (child.pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::unsetenv(kStarts);
    if (tunables != nullptr) {
      ::setenv("GLIBC_TUNABLES", tunables, 1);
    } else {
      ::unsetenv("GLIBC_TUNABLES");
    }
    const char* args[] = {"huge_page_heap_test", kChildFlag, "a b", "c", nullptr};
    ::execv("/proc/self/exe", const_cast<char**>(args));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) child.report[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return child;
}

TEST(HugePageHeapTest, StartsAgainInTheSameProcessWithTheTunable) {
  if (!ThpOffered()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  const Child child = RunChild(nullptr);
  EXPECT_EQ(child.report.at("starts"), "2");
  EXPECT_EQ(child.report.at("pid"), std::to_string(child.pid));
  EXPECT_EQ(child.report.at("tunables"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(child.report.at("args"), "a b|c");
}

TEST(HugePageHeapTest, KeepsTheOtherTunables) {
  if (!ThpOffered()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  const Child child = RunChild("glibc.malloc.top_pad=1048576");
  EXPECT_EQ(child.report.at("starts"), "2");
  EXPECT_EQ(child.report.at("tunables"), "glibc.malloc.top_pad=1048576:glibc.malloc.hugetlb=1");
}

TEST(HugePageHeapTest, DoesNotRestartWhenTheTunableIsSet) {
  const Child child = RunChild("glibc.malloc.hugetlb=0");
  EXPECT_EQ(child.report.at("starts"), "1");
  EXPECT_EQ(child.report.at("tunables"), "glibc.malloc.hugetlb=0");
  EXPECT_EQ(child.report.at("args"), "a b|c");
}

TEST(HugePageHeapTest, TheHeapGrowsOnHugePages) {
  // With THP "madvise" and its defrag "madvise" (or "always"), the kernel compacts memory to give
  // an madvised fault a huge page; otherwise it may fall back to small pages, and this would not
  // be a fact about our code.
  const std::string defrag = FirstLine("/sys/kernel/mm/transparent_hugepage/defrag");
  if (!ThpOffered() || (defrag.find("[madvise]") == std::string::npos &&
                        defrag.find("[always]") == std::string::npos)) {
    GTEST_SKIP() << "huge pages are not offered to madvised memory here";
  }
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan's allocator replaces glibc's malloc";
#endif
  const Child with = RunChild(nullptr);
  const Child without = RunChild("glibc.malloc.hugetlb=0");
  // Most of the 64 MiB; without the tunable none (THP "always" would give some: not asserted).
  EXPECT_GE(std::stol(with.report.at("anon_huge_kb")), 32 * 1024);
  if (FirstLine("/sys/kernel/mm/transparent_hugepage/enabled").find("[madvise]") !=
      std::string::npos) {
    EXPECT_EQ(std::stol(without.report.at("anon_huge_kb")), 0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], kChildFlag) == 0) return ChildMain(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
