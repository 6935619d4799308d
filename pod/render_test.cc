#include "pod/render.h"

#include <gtest/gtest.h>

namespace podsched::pod {
namespace {

TEST(RenderTest, DrawsEveryHostState) {
  Pod pod = Pod::Create("p", Generation::kV2, 2, 4).value();
  ASSERT_TRUE(pod.Allocate(AllocationId(1), {{0, 0}, {2, 2}}).ok());
  ASSERT_TRUE(pod.Allocate(AllocationId(2), {{0, 3}, {1, 1}}).ok());
  ASSERT_TRUE(pod.MarkUnhealthy(HostId(4)).ok());  // inside allocation 1
  ASSERT_TRUE(pod.MarkUnhealthy(HostId(6)).ok());  // free
  ASSERT_TRUE(pod.SetDraining(HostId(2), true).ok());
  const std::vector<std::string> grid = RenderGrid(pod, {});
  ASSERT_EQ(grid.size(), 3u);
  EXPECT_EQ(grid[0], "      0 1 2 3");
  EXPECT_EQ(grid[1], "  0 | A A D B");
  EXPECT_EQ(grid[2], "  4 | X A X .");
  const std::vector<std::string> legend = RenderLegend(pod, {});
  ASSERT_EQ(legend.size(), 3u);
  EXPECT_EQ(legend[0], "A  allocation 1: v2-32, 2x2 hosts at row 0 col 0");
  EXPECT_EQ(legend[1], "B  allocation 2: v2-8, 1x1 hosts at row 0 col 3");
  EXPECT_EQ(legend[2], ". free  X unhealthy  D draining");
}

TEST(RenderTest, CustomLabelsAndColors) {
  Pod pod = Pod::Create("p", Generation::kV2, 1, 2).value();
  ASSERT_TRUE(pod.Allocate(AllocationId(9), {{0, 0}, {1, 1}}).ok());
  RenderOptions o;
  o.labels[AllocationId(9)] = '7';
  EXPECT_EQ(RenderGrid(pod, o)[1], "  0 | 7 .");
  o.color = true;
  const std::string colored = RenderGrid(pod, o)[1];
  EXPECT_NE(colored.find('\x1b'), std::string::npos);
  EXPECT_EQ(VisibleWidth(colored), VisibleWidth("  0 | 7 ."));
}

TEST(RenderTest, DefaultLabelsSkipReservedLetters) {
  EXPECT_EQ(DefaultLabel(AllocationId(1)), 'A');
  EXPECT_EQ(DefaultLabel(AllocationId(4)), 'E');  // D is "draining"
  for (int64_t i = 1; i < 200; ++i) {
    const char c = DefaultLabel(AllocationId(i));
    EXPECT_TRUE(c != 'X' && c != 'D' && c != '.' && c != 'x' && c != 'd') << i;
  }
}

TEST(RenderTest, SideBySidePadsByVisibleWidth) {
  const std::vector<std::string> out = SideBySide({{"ab", "\x1b[1mc\x1b[0m"}, {"x", "y", "z"}}, 2);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], "ab  x");
  EXPECT_EQ(out[1], "\x1b[1mc\x1b[0m   y");
  EXPECT_EQ(out[2], "    z");
}

}  // namespace
}  // namespace podsched::pod
