#include "harness/report/text_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace locklab {
namespace {

constexpr const char* kGap = "  ";

bool LooksNumeric(const std::string& s) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
}

std::string Pad(const std::string& s, size_t width, bool right) {
  if (s.size() >= width) return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string TextTable::ToString() const {
  const size_t n = header_.size();
  std::vector<size_t> width(n, 0);
  for (size_t c = 0; c < n; ++c) {
    width[c] = header_[c].size();
    for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
  }
  // A group label wider than its columns widens the group's last column.
  for (const Group& g : groups_) {
    if (g.count == 0 || g.first + g.count > n) continue;
    size_t span = 0;
    for (size_t c = g.first; c < g.first + g.count; ++c) span += width[c] + (c > g.first ? 2 : 0);
    if (g.label.size() > span) width[g.first + g.count - 1] += g.label.size() - span;
  }
  // A column of numbers (empty cells aside) is right-aligned, header included.
  std::vector<bool> right(n, false);
  for (size_t c = 0; c < n; ++c) {
    bool any = false, all = true;
    for (const auto& r : rows_) {
      if (r[c].empty()) continue;
      any = true;
      all = all && LooksNumeric(r[c]);
    }
    right[c] = any && all;
  }
  auto line = [&](const std::vector<std::string>& cells, bool) {
    std::string s;
    for (size_t c = 0; c < n; ++c) {
      s += (c ? kGap : "") + Pad(cells[c], width[c], right[c]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out;
  if (!groups_.empty()) {
    std::string s;
    size_t col = 0;
    for (const Group& g : groups_) {
      if (g.count == 0 || g.first + g.count > n || g.first < col) continue;
      for (; col < g.first; ++col) s += std::string(width[col], ' ') + kGap;
      size_t span = 0;
      for (size_t c = g.first; c < g.first + g.count; ++c) span += width[c] + (c > g.first ? 2 : 0);
      std::string label = g.label + " ";
      s += label + std::string(span > label.size() ? span - label.size() : 0, '-') + kGap;
      col = g.first + g.count;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + "\n";
  }
  out += line(header_, true);
  for (const auto& r : rows_) out += line(r, false);
  return out;
}

std::string ShortRate(double x) {
  if (x == 0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(x) < 0.001 ? "%.1e" : "%.3g", x);
  return buf;
}

}  // namespace locklab
