#include "harness/scenario/expr.h"

#include <cctype>
#include <cstdlib>

namespace locklab {
namespace {

class Parser {
 public:
  Parser(const std::string& s, const Params& p) : s_(s), params_(p) {}

  bool Parse(double* out, std::string* error) {
    if (s_.size() > kMaxExprChars) return Err("longer than " + std::to_string(kMaxExprChars) + " characters", error);
    double v = 0;
    if (!Sum(&v, 0, error)) return false;
    Skip();
    if (i_ != s_.size()) return Err(std::string("unexpected '") + s_[i_] + "' at " + std::to_string(i_ + 1), error);
    *out = v;
    return true;
  }

 private:
  bool Err(const std::string& what, std::string* error) {
    *error = "expression '" + s_ + "': " + what;
    return false;
  }
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Sum(double* out, int depth, std::string* error) {
    double v = 0;
    if (!Product(&v, depth, error)) return false;
    for (Skip(); i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'); Skip()) {
      const char op = s_[i_++];
      double r = 0;
      if (!Product(&r, depth, error)) return false;
      v = op == '+' ? v + r : v - r;
    }
    *out = v;
    return true;
  }
  bool Product(double* out, int depth, std::string* error) {
    double v = 0;
    if (!Factor(&v, depth, error)) return false;
    for (Skip(); i_ < s_.size() && (s_[i_] == '*' || s_[i_] == '/'); Skip()) {
      const char op = s_[i_++];
      double r = 0;
      if (!Factor(&r, depth, error)) return false;
      if (op == '/' && r == 0) return Err("division by zero", error);
      v = op == '*' ? v * r : v / r;
    }
    *out = v;
    return true;
  }
  bool Factor(double* out, int depth, std::string* error) {
    if (depth > kMaxExprDepth) return Err("nested deeper than " + std::to_string(kMaxExprDepth), error);
    Skip();
    if (i_ == s_.size()) return Err("ends where a number or name was expected", error);
    const char c = s_[i_];
    if (c == '-') {
      ++i_;
      if (!Factor(out, depth + 1, error)) return false;
      *out = -*out;
      return true;
    }
    if (c == '(') {
      ++i_;
      if (!Sum(out, depth + 1, error)) return false;
      Skip();
      if (i_ == s_.size() || s_[i_] != ')') return Err("missing ')'", error);
      ++i_;
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const size_t start = i_;
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) ++i_;
      const std::string num = s_.substr(start, i_ - start);
      char* end = nullptr;
      *out = std::strtod(num.c_str(), &end);
      if (end != num.c_str() + num.size()) return Err("bad number '" + num + "'", error);
      return true;
    }
    if (std::islower(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = i_;
      while (i_ < s_.size() && (std::islower(static_cast<unsigned char>(s_[i_])) ||
                                std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
        ++i_;
      const std::string name = s_.substr(start, i_ - start);
      auto it = params_.find(name);
      if (it == params_.end()) {
        std::string names;
        for (const auto& [k, v] : params_) names += (names.empty() ? "" : ", ") + k;
        return Err("unknown parameter '" + name + "' (parameters: " + (names.empty() ? "none" : names) + ")", error);
      }
      *out = it->second;
      return true;
    }
    return Err(std::string("unexpected '") + c + "' at " + std::to_string(i_ + 1), error);
  }

  const std::string& s_;
  const Params& params_;
  size_t i_ = 0;
};

}  // namespace

bool EvalExpr(const std::string& text, const Params& params, double* out, std::string* error) {
  return Parser(text, params).Parse(out, error);
}

}  // namespace locklab
