// `locklab check HISTORY`: judges a history file that any program wrote (the Jepsen-style format
// of harness/run/jepsen_history.h, README "Checking any lock's history") with the checkers of a
// run, and prints and writes what a run does: the table, the first violation's timeline, the
// report (schema locklab.report/1; its config names the history file) and the replay command.
// Exit 0 judged (violations are findings); 2 bad input (the file unreadable, or its first
// malformed line, by number), one line on stderr, nothing written; 1 the report not written.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace locklab {

struct CheckFlags {
  std::string history;
  std::string out;  // "" = results/check-<history file's stem>.json
  bool quiet = false;
  int holders_allowed = 1;  // a semaphore's permits: that many holders at once are no violation
};

void AddCheckFlags(CLI::App* app, CheckFlags* f);
int CheckCommand(const CheckFlags& f);

// `check` added to the locklab command.
class CheckCli {
 public:
  explicit CheckCli(CLI::App& app);
  bool parsed() const { return sub_->parsed(); }
  int Run() const { return CheckCommand(flags_); }

 private:
  CLI::App* sub_ = nullptr;
  CheckFlags flags_;
};

}  // namespace locklab
