// Text rendering of a pod's host grid, for the podsim demo and `podctl pod`.
//
//          0 1 2 3 4 5 6 7
//     0  | A A . . B B B B
//     8  | A A . X B B B B
//    ...
// One cell per host: the allocation's label, `.` free, `X` unhealthy (also inside an
// allocation), `D` draining and free. Rows start with the HostId of their first host and columns
// are numbered modulo 10, so host ids can be read off the grid (id = row start + column).
// With `color`, allocations get ANSI background colours, unhealthy hosts red, draining yellow.
//
// Pure: returns strings, writes nothing. Thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pod/pod.h"

namespace podsched::pod {

struct RenderOptions {
  bool color = false;
  // Labels to use for some allocations; others get DefaultLabel(id).
  std::map<AllocationId, char> labels;
};

// A-Z without D and X, then a-z without d and x, then 1-9, cycling by id (1 -> 'A').
char DefaultLabel(AllocationId id);

// The grid, one string per line (header first).
std::vector<std::string> RenderGrid(const Pod& pod, const RenderOptions& options);
// One line per allocation ("A  allocation 1: v2-32, 2x2 hosts at row 0 col 2"), then the key
// for the other symbols.
std::vector<std::string> RenderLegend(const Pod& pod, const RenderOptions& options);
// Grid and legend joined with newlines.
std::string Render(const Pod& pod, const RenderOptions& options);

// Printed width of `text`, ignoring ANSI escape sequences.
int VisibleWidth(std::string_view text);
// Places blocks of lines next to each other, each padded to its widest line, `gap` spaces apart.
std::vector<std::string> SideBySide(const std::vector<std::vector<std::string>>& blocks, int gap);

}  // namespace podsched::pod
