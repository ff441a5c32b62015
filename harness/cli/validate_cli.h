// The flags of `locklab validate` and the command itself (harness/cli/validate.h says what it
// measures). Exit status: 0 every run completed (disagreements are findings, not errors); 1 a
// run did not complete or the JSON could not be written; 2 bad input, one line naming the flag,
// before any run.
#pragma once

#include <CLI/CLI.hpp>

#include "harness/cli/validate.h"

namespace locklab {

struct ValidateFlags {
  ValidateOptions o;
  std::vector<std::string> only;  // as given: NAME or NAME,NAME (repeatable)
  bool no_progress = false;
};

void AddValidateFlags(CLI::App* app, ValidateFlags* f);
// `command` is the command line, kept in the JSON's context.
int ValidateCommand(ValidateFlags& f, const std::string& command);

}  // namespace locklab
