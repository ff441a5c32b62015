#include "harness/scenario/expr.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace locklab {
namespace {

// Recursive descent; each level returns its value or the first error. Depth is bounded by
// kMaxExprDepth and every loop consumes input, so the text's length bounds the work.
class Parser {
 public:
  Parser(const std::string& s, const Params& p) : s_(s), params_(p) {}

  Result<double> Parse() {
    if (s_.size() > kMaxExprChars) return Err("longer than " + std::to_string(kMaxExprChars) + " characters");
    Result<double> v = Sum(0);
    if (!v.ok()) return v;
    Skip();
    if (i_ != s_.size()) return Err(std::string("unexpected '") + s_[i_] + "' at " + std::to_string(i_ + 1));
    if (!std::isfinite(*v)) return Err("the result is not a finite number");
    return v;
  }

 private:
  Status Err(const std::string& what) const { return Status::Invalid("expression '" + s_ + "': " + what); }
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  Result<double> Sum(int depth) {
    Result<double> v = Product(depth);
    if (!v.ok()) return v;
    for (Skip(); i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'); Skip()) {
      const char op = s_[i_++];
      Result<double> r = Product(depth);
      if (!r.ok()) return r;
      *v = op == '+' ? *v + *r : *v - *r;
    }
    return v;
  }
  Result<double> Product(int depth) {
    Result<double> v = Factor(depth);
    if (!v.ok()) return v;
    for (Skip(); i_ < s_.size() && (s_[i_] == '*' || s_[i_] == '/'); Skip()) {
      const char op = s_[i_++];
      Result<double> r = Factor(depth);
      if (!r.ok()) return r;
      if (op == '/' && *r == 0) return Err("division by zero");
      *v = op == '*' ? *v * *r : *v / *r;
    }
    return v;
  }
  Result<double> Factor(int depth) {
    if (depth > kMaxExprDepth) return Err("nested deeper than " + std::to_string(kMaxExprDepth));
    Skip();
    if (i_ == s_.size()) return Err("ends where a number or name was expected");
    const char c = s_[i_];
    if (c == '-') {
      ++i_;
      Result<double> v = Factor(depth + 1);
      if (v.ok()) *v = -*v;
      return v;
    }
    if (c == '(') {
      ++i_;
      Result<double> v = Sum(depth + 1);
      if (!v.ok()) return v;
      Skip();
      if (i_ == s_.size() || s_[i_] != ')') return Err("missing ')'");
      ++i_;
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return Number();
    if (std::islower(static_cast<unsigned char>(c)) || c == '_') return Name();
    return Err(std::string("unexpected '") + c + "' at " + std::to_string(i_ + 1));
  }
  Result<double> Number() {
    const size_t start = i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) ++i_;
    const std::string num = s_.substr(start, i_ - start);
    char* end = nullptr;
    const double v = std::strtod(num.c_str(), &end);
    if (end != num.c_str() + num.size()) return Err("bad number '" + num + "'");
    return v;
  }
  Result<double> Name() {
    const size_t start = i_;
    while (i_ < s_.size() && (std::islower(static_cast<unsigned char>(s_[i_])) ||
                              std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
      ++i_;
    const std::string name = s_.substr(start, i_ - start);
    auto it = params_.find(name);
    if (it == params_.end()) {
      std::string names;
      for (const auto& [k, v] : params_) names += (names.empty() ? "" : ", ") + k;
      return Err("unknown parameter '" + name + "' (parameters: " + (names.empty() ? "none" : names) + ")");
    }
    return it->second;
  }

  const std::string& s_;
  const Params& params_;
  size_t i_ = 0;
};

}  // namespace

Result<double> EvalExpr(const std::string& text, const Params& params) { return Parser(text, params).Parse(); }

}  // namespace locklab
