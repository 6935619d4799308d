#include "pod/render.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace podsched::pod {
namespace {

constexpr std::string_view kLabels =
    "ABCEFGHIJKLMNOPQRSTUVWYZabcefghijklmnopqrstuvwyz123456789";
constexpr std::string_view kReset = "\x1b[0m";
constexpr std::string_view kFree = "\x1b[2m";           // dim
constexpr std::string_view kUnhealthy = "\x1b[1;41m";   // bold on red
constexpr std::string_view kDraining = "\x1b[30;43m";   // black on yellow
constexpr std::array<std::string_view, 6> kAllocationColors = {
    "\x1b[30;46m", "\x1b[30;42m", "\x1b[30;45m", "\x1b[30;44m", "\x1b[30;47m", "\x1b[30;106m"};

char LabelOf(AllocationId id, const RenderOptions& o) {
  auto it = o.labels.find(id);
  return it != o.labels.end() ? it->second : DefaultLabel(id);
}

std::string_view ColorOf(AllocationId id) {
  const auto n = static_cast<int64_t>(kAllocationColors.size());
  return kAllocationColors[static_cast<size_t>(((id.value() % n) + n) % n)];
}

std::string Cell(char symbol, std::string_view color, bool use_color) {
  std::string out;
  if (use_color) out += color;
  out += symbol;
  if (use_color) out += kReset;
  return out;
}

std::string TypeName(const Pod& pod, SliceShape shape) {
  for (const AcceleratorType& t : ValidTypes(pod.generation(), pod.host_rows(), pod.host_cols())) {
    if (t.shape() == shape || t.shape() == shape.Rotated()) return t.ToString();
  }
  return std::to_string(shape.hosts()) + " hosts";
}

}  // namespace

char DefaultLabel(AllocationId id) {
  const auto n = static_cast<int64_t>(kLabels.size());
  return kLabels[static_cast<size_t>((((id.value() - 1) % n) + n) % n)];
}

std::vector<std::string> RenderGrid(const Pod& pod, const RenderOptions& o) {
  std::vector<std::string> lines;
  const int margin = pod.num_hosts() > 100 ? 4 : 3;
  std::string header(static_cast<size_t>(margin) + 3, ' ');
  for (int c = 0; c < pod.host_cols(); ++c) {
    header += static_cast<char>('0' + c % 10);
    if (c + 1 < pod.host_cols()) header += ' ';
  }
  lines.push_back(header);
  for (int r = 0; r < pod.host_rows(); ++r) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%*d | ", margin, pod.HostAt({r, 0}).value());
    std::string line = prefix;
    std::optional<AllocationId> previous;
    for (int c = 0; c < pod.host_cols(); ++c) {
      const HostStatus& h = pod.host(pod.HostAt({r, c}));
      if (c > 0) {
        // With colour, the gap inside a slice takes the slice's colour so it reads as a block.
        const bool inside = o.color && h.allocation && h.allocation == previous;
        line += inside ? Cell(' ', ColorOf(*h.allocation), true) : " ";
      }
      previous = h.allocation;
      if (!h.healthy) {
        line += Cell('X', kUnhealthy, o.color);
      } else if (h.allocation) {
        line += Cell(LabelOf(*h.allocation, o), ColorOf(*h.allocation), o.color);
      } else if (h.draining) {
        line += Cell('D', kDraining, o.color);
      } else {
        line += Cell('.', kFree, o.color);
      }
    }
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> RenderLegend(const Pod& pod, const RenderOptions& o) {
  std::vector<std::string> lines;
  for (const auto& [id, p] : pod.allocations()) {
    std::string line = Cell(LabelOf(id, o), ColorOf(id), o.color);
    line += "  allocation " + std::to_string(id.value()) + ": " + TypeName(pod, p.shape) + ", " +
            std::to_string(p.shape.rows) + "x" + std::to_string(p.shape.cols) +
            " hosts at row " + std::to_string(p.origin.row) + " col " +
            std::to_string(p.origin.col);
    lines.push_back(line);
  }
  lines.push_back(Cell('.', kFree, o.color) + " free  " + Cell('X', kUnhealthy, o.color) +
                  " unhealthy  " + Cell('D', kDraining, o.color) + " draining");
  return lines;
}

std::string Render(const Pod& pod, const RenderOptions& options) {
  std::string out;
  for (const std::vector<std::string>& part :
       {RenderGrid(pod, options), RenderLegend(pod, options)}) {
    for (const std::string& line : part) out += line + "\n";
  }
  return out;
}

int VisibleWidth(std::string_view text) {
  int width = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b') {
      while (i < text.size() && text[i] != 'm') ++i;
      continue;
    }
    ++width;
  }
  return width;
}

std::vector<std::string> SideBySide(const std::vector<std::vector<std::string>>& blocks,
                                    int gap) {
  std::vector<std::string> out;
  size_t height = 0;
  for (const auto& b : blocks) height = std::max(height, b.size());
  std::vector<int> widths;
  for (const auto& b : blocks) {
    int w = 0;
    for (const std::string& line : b) w = std::max(w, VisibleWidth(line));
    widths.push_back(w);
  }
  for (size_t row = 0; row < height; ++row) {
    std::string line;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const std::string cell = row < blocks[i].size() ? blocks[i][row] : "";
      line += cell;
      if (i + 1 < blocks.size()) {
        line.append(static_cast<size_t>(widths[i] - VisibleWidth(cell) + gap), ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out.push_back(line);
  }
  return out;
}

}  // namespace podsched::pod
