// `locklab run` once its flags are read: the sweep's runs on --jobs threads (simulator only),
// an optional --shard slice, the report and/or the compact --results lines.
//
// Output does not depend on --jobs: results are collected by run number and written in sweep
// order, so the report and results bytes are those of --jobs 1. Progress lines on stderr name
// "run i/n" and may come in any order when jobs > 1.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "algorithms/status.h"
#include "harness/cli/cli.h"
#include "harness/run/parallel_runs.h"

namespace locklab {

// --jobs N's check: 1 to kMaxJobs, with no text of its own in --help.
CLI::Validator JobsRange();

// The flags --jobs, --shard, --results and --full-dir, bound to the given strings / int.
void AddWideFlags(CLI::App* app, int* jobs, std::string* shard, std::string* results, std::string* full_dir);

// Checks those flags' values and sets them on *req (--full-dir defaults to the results path
// without ".jsonl" + "-full"). kInvalid with a one-line message.
Status ApplyWideFlags(int jobs, const std::string& shard, const std::string& results, const std::string& full_dir,
                      RunRequest* req);

// Resolves and runs req's specs (or its shard's), prints the table and writes the outputs.
// Returns the exit code (kExitOk, kExitInternal: a run did not complete or a file could not be
// written, kExitBadInput: with one line on stderr).
int ExecuteRun(RunRequest& req);

}  // namespace locklab
