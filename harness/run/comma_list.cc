#include "harness/run/comma_list.h"

#include <sstream>

namespace locklab {

std::vector<std::string> SplitComma(const std::string& text, EmptyItems empty) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty() || empty == EmptyItems::kKeep) out.push_back(item);
  return out;
}

}  // namespace locklab
