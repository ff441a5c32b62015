// Expr: the arithmetic a scenario file may write where a number is expected, so that its
// timeline follows its parameters ("ttl_ms + 200", "2 * ttl_ms", "(ttl_ms - hold_ms) / 2").
//
// Grammar: numbers (decimal, optional fraction), parameter names ([a-z_][a-z0-9_]*), + - * /,
// unary minus, parentheses. Division is exact (no rounding); callers round where they need
// integers. Depth and length are bounded (kMaxExprChars, kMaxExprDepth): no input can make it
// recurse or loop without limit.
#pragma once

#include <map>
#include <string>

#include "algorithms/status.h"

namespace locklab {

constexpr size_t kMaxExprChars = 400;
constexpr int kMaxExprDepth = 32;

using Params = std::map<std::string, double>;

// The value, always finite; or kInvalid with a one-line message naming the problem ("unknown
// parameter 'tll_ms' (parameters: ...)", "division by zero", "unexpected ')' at 7", "the result is
// not a finite number").
Result<double> EvalExpr(const std::string& text, const Params& params);

}  // namespace locklab
