#include "harness/cli/check_cli.h"

#include <cstdio>
#include <filesystem>
#include <span>

#include "harness/cli/cli.h"
#include "harness/report/report.h"
#include "harness/report/report_text.h"
#include "harness/run/jepsen_history.h"
#include "harness/run/read_file.h"

namespace locklab {
namespace {

constexpr std::uintmax_t kMaxHistoryBytes = std::uintmax_t{4} << 30;

// Commands recorded in the history ("command" lines), by their first word.
CommandStats CommandsOf(const std::vector<Event>& events) {
  CommandStats s;
  for (const Event& e : events) {
    if (e.type != Ev::kCommand) continue;
    ++s.total;
    ++s.by_name[e.detail.substr(0, e.detail.find(' '))];
  }
  return s;
}

// The history as a finished run: what the table, the timeline and the report are made of.
RunResult AsRun(const std::string& path, RecordedHistory& h) {
  RunResult r;
  r.spec.algorithm = "history";
  r.spec.retry = "-";
  r.spec.backend = "history";
  r.spec.seed = 0;
  r.completed = true;
  History history;
  for (Event& e : h.events) history.Add(e.t_us, e.client, e.type, e.value, std::move(e.detail));
  r.check = CheckAll(history, h.input);
  r.commands = CommandsOf(history.events());
  r.duration_us = h.input.end_us;
  r.history_events = static_cast<int64_t>(history.events().size());
  r.counter_final = h.counter_final;
  r.stock_final = h.stock_final;
  r.replay = "locklab check " + ShellQuote(path);
  if (h.input.holders_allowed != 1) r.replay += " --holders-allowed " + std::to_string(h.input.holders_allowed);
  r.notes.push_back(std::to_string(h.lines) + " lines, " + std::to_string(h.processes) +
                    " processes; faults are the history's own (its crash, pause and fault lines)");
  return r;
}

nlohmann::json CheckReport(const RunResult& r, const std::string& path) {
  ReportContext ctx;
  ctx.backend = "history";
  ctx.seed = 0;
  nlohmann::json report = BuildReport(std::span(&r, 1), ctx);
  const nlohmann::json config = {{"history", path}};
  report["config"] = config;
  nlohmann::json& run = report["runs"][0];
  run["config"] = config;
  run["faults"] = "recorded";
  return report;
}

void PrintFirstViolation(const RunResult& r, const std::string& path) {
  const Violation& v = r.check.safety.examples[0];
  std::string clients;
  for (int c : v.clients) clients += (clients.empty() ? "" : ", ") + std::to_string(c);
  std::printf("\nfirst violation (%s%s): %.3f ms to %.3f ms, processes %s (!! = two holders)\n", path.c_str(),
              v.lock.empty() ? "" : (", lock " + v.lock).c_str(), static_cast<double>(v.start_us) / 1000.0,
              static_cast<double>(v.end_us) / 1000.0, clients.c_str());
  std::fputs(TimelineTable(v).c_str(), stdout);
}

std::string DefaultCheckReportPath(const std::string& history) {
  return "results/check-" + std::filesystem::path(history).stem().string() + ".json";
}

}  // namespace

void AddCheckFlags(CLI::App* app, CheckFlags* f) {
  app->add_option("HISTORY", f->history, "the history: JSON lines, one operation each (format in the README)")
      ->required()
      ->type_name("FILE");
  app->add_option("--out", f->out, "report file (default results/check-<HISTORY's name>.json)")->type_name("FILE");
  app->add_flag("--quiet", f->quiet, "no table on stdout (the report path and replay command still print)");
  app->add_option("--holders-allowed", f->holders_allowed,
                  "holders allowed at once (a semaphore's permits; default 1: a lock)")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app->footer(
      "\nA line: {\"time\": NS, \"process\": N, \"type\": \"invoke\"|\"ok\"|\"fail\"|\"info\",\n"
      "          \"f\": \"acquire\"|\"release\"|\"read\"|\"write\", \"value\": ..., \"lock\": \"name\",\n"
      "          \"mode\": \"read\" (an acquire ok: a reader's shared hold)}\n"
      "Examples:\n"
      "  locklab run --algorithm token --gc-pause-ms 1500 --gc-pause-rate 0.5 --history-out h.jsonl\n"
      "  locklab check h.jsonl                 the run's verdicts again, from its history\n"
      "  locklab check my-service.jsonl --out my-service.json\n"
      "Exit status: 0 judged (violations are findings), 1 the report could not be written, 2 bad input\n"
      "(the file's first malformed line, by number).\n");
}

CheckCli::CheckCli(CLI::App& app)
    : sub_(app.add_subcommand("check",
                              "judge a history any program wrote (Jepsen-style JSON lines) with the checkers of a run")) {
  AddCheckFlags(sub_, &flags_);
}

int CheckCommand(const CheckFlags& f) {
  if (f.out.empty() == false && std::filesystem::is_directory(f.out))
    return BadInput("--out " + f.out + ": give a file name, not a directory");
  Result<std::string> text = ReadFileText(f.history, kMaxHistoryBytes);
  if (!text.ok()) return BadInput(text.status().message());
  Result<RecordedHistory> parsed = ParseJepsenHistory(*text);
  if (!parsed.ok()) return BadInput(f.history + " " + parsed.status().message());
  if (parsed->lines == 0) return BadInput(f.history + ": empty (no operation to check)");
  parsed->input.holders_allowed = f.holders_allowed;
  const RunResult r = AsRun(f.history, *parsed);
  if (!f.quiet) {
    std::fputs(RunsTable({r}).c_str(), stdout);
    if (!r.check.safety.examples.empty()) PrintFirstViolation(r, f.history);
  }
  const std::string path = f.out.empty() ? DefaultCheckReportPath(f.history) : f.out;
  if (Status st = WriteFileAtomic(path, ReportText(CheckReport(r, f.history))); !st.ok()) {
    std::fprintf(stderr, "locklab: %s\n", OneLine(st.message()).c_str());
    return kExitInternal;
  }
  std::printf("report: %s\nreplay: %s\n", path.c_str(), r.replay.c_str());
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace locklab
