// SplitComma: a flag's comma-separated list ("sim,redis", "pause_client,crash_node") as items.
// One splitter for every command; the loop is bounded by the text's length.
#pragma once

#include <string>
#include <vector>

namespace locklab {

enum class EmptyItems : bool {
  kDrop,  // "a,,b" -> {"a", "b"}: for lists where an empty item means nothing
  kKeep,  // "a,,b" -> {"a", "", "b"}: for lists whose parser names an empty item as an error
};

// The items between commas, in order. A trailing comma adds no item; "" gives none.
std::vector<std::string> SplitComma(const std::string& text, EmptyItems empty = EmptyItems::kDrop);

}  // namespace locklab
