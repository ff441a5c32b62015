// `locklab scorecard` added to the locklab command: the flags and the command are
// harness/bench/scorecard.h's.
#pragma once

#include <CLI/CLI.hpp>

#include "harness/bench/scorecard.h"

namespace locklab {

class ScorecardCli {
 public:
  explicit ScorecardCli(CLI::App& app)
      : sub_(app.add_subcommand("scorecard", "the lock libraries people run and locklab's locks under each fault: "
                                             "rates of two holders (make scorecard)")) {
    AddScorecardFlags(sub_, &options_);
  }
  bool parsed() const { return sub_->parsed(); }
  int Run() const { return ScorecardCommand(options_); }

 private:
  CLI::App* sub_ = nullptr;
  ScorecardOptions options_;
};

}  // namespace locklab
