// TextTable: a plain-text table for terminals. Columns are padded to their widest cell; cells
// that look like numbers are right-aligned, the rest left-aligned. Optional column groups print
// a label line above the header (the suite's "fault preset" groups).
#pragma once

#include <string>
#include <vector>

namespace locklab {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}

  // A label over columns [first, first + count).
  void AddGroup(std::string label, size_t first, size_t count) { groups_.push_back({std::move(label), first, count}); }
  // Missing cells print empty; extra cells are an error of the caller and are dropped.
  void AddRow(std::vector<std::string> cells);
  std::string ToString() const;

 private:
  struct Group {
    std::string label;
    size_t first, count;
  };
  std::vector<std::string> header_;
  std::vector<Group> groups_;
  std::vector<std::vector<std::string>> rows_;
};

// Cell text for a number with `decimals` digits after the point ("12.3").
std::string Fixed(double v, int decimals);
// A rate in at most 7 characters, 3 significant digits: "0", "0.0123", "1.2e-05" (below 0.001).
std::string ShortRate(double x);

}  // namespace locklab
