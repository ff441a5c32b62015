#include "harness/cli/explore_cli.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "harness/cli/cli.h"
#include "harness/cli/sweep_run.h"
#include "harness/explore/explore.h"
#include "harness/explore/findability.h"
#include "harness/explore/found.h"
#include "harness/explore/generate.h"
#include "harness/report/report.h"
#include "harness/run/config.h"
#include "harness/run/parallel_runs.h"
#include "harness/run/spec_fields.h"
#include "harness/run/write_file.h"

namespace locklab {
namespace {

using nlohmann::json;

const char* const kFooter = R"(
Ranges (--range NAME=LO-HI followed by ttl or ms; defaults in TTL units):
  start 0-1.5ttl   when each client starts        hold 0.05-0.5ttl  each critical section
  at 0-2ttl        when a timed fault fires        pause 0.1-3ttl    pause_client, pause_node
  delay 0.1-3ttl   delay_message                   jump 0.1-5ttl     clock jumps (either sign)
  partition 0.1-3ttl                               failover 0-0.5ttl replica cut -> promotion

Finding classes (--find): overlap (two holders at once), damage (lost updates, oversold stock,
stale writes accepted), stuck (a waiter and no live holder for --liveness-bound-ms, default
ttl + 2000), releases-failed; and what faults every lock suffers do not explain:
overlap-unexplained (neither holder was frozen by a client pause while it held),
stuck-unexplained (no client paused, no crash within the last TTL), releases-failed-unexplained
(the releasing client was not paused during that hold).

Examples:
  # a token lock released by a plain DEL, under client pauses: finds and shrinks the misdelete
  locklab explore --algorithm token:release=del --faults pause_client --find overlap-unexplained
  # fencing under pauses: damage is never found; the budget ends and says what was searched
  locklab explore --algorithm fencing --faults pause_client --find damage --budget-runs 20000
  # Redlock without its validity check, delayed messages, then replayed on real Redis
  locklab explore --algorithm redlock:validity-check=false --faults delay_message --find overlap --confirm-real
  # one run of an exploration again, from its run seed (printed with every finding)
  locklab explore --algorithm token:release=del --faults pause_client --run-seed 123456789
  # the findability table of the hand-written scenarios
  locklab explore --findability --out results/explore/findability.json
)";

// The space from the flags; kInvalid names the flag.
Result<ExploreSpace> SpaceFromFlags(const ExploreFlags& f) {
  ExploreSpace s;
  s.algorithm = f.algorithm;
  s.clients = f.clients;
  s.requests = f.requests;
  s.ttl_ms = f.ttl_ms;
  s.max_faults = f.max_faults;
  s.liveness_bound_ms = f.liveness_bound_ms;
  Result<std::vector<FaultAction::Kind>> kinds = ParseKinds(f.faults);
  if (!kinds.ok()) return kinds.status();
  s.kinds = *kinds;
  Result<Strategy> strategy = ParseStrategy(f.strategy);
  if (!strategy.ok()) return strategy.status();
  s.strategy = *strategy;
  Result<std::vector<FindingClass>> find = ParseFindingClasses(f.find);
  if (!find.ok()) return find.status();
  s.find = *find;
  for (const std::string& r : f.ranges) {
    const size_t eq = r.find('=');
    MagnitudeRange* range = eq == std::string::npos ? nullptr : FindRange(&s, r.substr(0, eq));
    if (range == nullptr)
      return Status::Invalid("--range " + r + ": expected NAME=LO-HI{ttl|ms} with NAME one of start, hold, at, "
                             "pause, delay, jump, partition, failover");
    Result<MagnitudeRange> parsed = ParseMagnitudeRange(r.substr(eq + 1), "--range " + r.substr(0, eq));
    if (!parsed.ok()) return parsed.status();
    *range = *parsed;
  }
  Result<AlgorithmChoice> retry = ParseAlgorithmChoice(f.retry);
  if (!retry.ok()) return retry.status().Prefixed("--retry");
  json opts = json::object();
  for (const auto& [k, v] : retry->options.values()) opts[k] = v;
  s.run = {{"retry", retry->name}, {"retry_options", opts}};
  if (!f.workload.empty()) s.run["workload"] = f.workload;
  if (f.stock >= 0) s.run["stock"] = f.stock;
  if (f.app_servers >= 0) s.run["app_servers"] = f.app_servers;
  if (f.command_timeout_ms >= 0) s.run["command_timeout_ms"] = f.command_timeout_ms;
  if (f.acquire_timeout_ms >= 0) s.run["acquire_timeout_ms"] = f.acquire_timeout_ms;
  if (f.replica) s.run["replica"] = true;
  if (f.node_min_down_ms > 0) s.run["node_min_down_ms"] = f.node_min_down_ms;
  LOCKLAB_RETURN_IF_ERROR(CheckSpace(&s));
  return s;
}

void Progress(const ExploreFlags& f, const std::string& line) {
  if (!f.no_progress) std::fprintf(stderr, "%s\n", line.c_str());
}

// --run-seed: one run of the space again, with its schedule and timeline.
int ReplayRun(const ExploreFlags& f, const ExploreSpace& space) {
  const RunOutcome o = ExploreOne(space, static_cast<uint64_t>(f.run_seed));
  json steps = CandidateScenario(space, o.candidate, json::object(), ScenarioText())["steps"];
  std::printf("run seed %lld (%s): %zu clients, %zu faults\n", static_cast<long long>(f.run_seed),
              StrategyName(o.strategy), o.candidate.clients.size(), o.candidate.faults.size());
  for (const json& s : steps) std::printf("  %s\n", s.dump().c_str());
  if (!o.error.empty()) {
    std::fprintf(stderr, "locklab: the run did not complete: %s\n", o.error.c_str());
    return kExitInternal;
  }
  std::fputs(CandidateTable(space, o.candidate).c_str(), stdout);
  std::printf("showed: %s\n", FindingsText(o.observed, space.find).c_str());
  return kExitOk;
}

std::string DefaultOut(const ExploreFlags& f, const json& doc) {
  return "results/explore/" + doc["id"].get<std::string>() + ".json";
}

// The finding: shrunk, written, replayed from its file (and on real Redis).
int ReportFinding(const ExploreFlags& f, const ExploreOptions& o, const ExploreResult& r, const std::string& command) {
  const ExploreSpace& space = o.space;
  std::printf("found: %s in run %lld after %.2f s (run seed %llu, %s, %zu faults, %zu clients)\n",
              FindingsText(r.finding.observed, space.find).c_str(), static_cast<long long>(r.found_run), r.seconds,
              static_cast<unsigned long long>(r.finding.run_seed), StrategyName(r.finding.strategy),
              r.finding.candidate.faults.size(), r.finding.candidate.clients.size());
  std::printf("  this run again: locklab explore %s --run-seed %llu\n", SpaceFlags(space).c_str(),
              static_cast<unsigned long long>(r.finding.run_seed));
  if (!r.shrunk) return kExitOk;
  std::printf("shrunk in %lld runs%s (%.2f s): %zu -> %zu faults, %zu -> %zu clients; keeps: %s\n",
              static_cast<long long>(r.shrink_stats.tries), FewerFaultsText(r).c_str(), r.shrink_seconds,
              r.finding.candidate.faults.size(),
              r.minimal.faults.size(), r.finding.candidate.clients.size(), r.minimal.clients.size(),
              FindingClassName(r.primary));
  // The story names the command as a user types it (not the path this binary was started by).
  const size_t blank = command.find(' ');
  const json doc = FoundScenarioDoc(o, r, "locklab" + (blank == std::string::npos ? "" : command.substr(blank)));
  const std::string path = f.out.empty() ? DefaultOut(f, doc) : f.out;
  if (Status s = WriteFileAtomic(path, doc.dump(2) + "\n"); !s.ok()) {
    std::fprintf(stderr, "locklab: %s\n", s.message().c_str());
    return kExitInternal;
  }
  std::printf("scenario: %s\n\n", path.c_str());
  const FileReplay sim = ReplayFoundFile(path, "sim");
  std::printf("== found: %s on sim ==\n%s", space.algorithm.c_str(), sim.table.c_str());
  std::printf("expected: %s\nobserved: %s\nverdict:  %s\nreplay: %s\n", sim.verdict.expected.c_str(),
              sim.verdict.observed.c_str(), sim.matches ? "as expected" : "DIFFERS", sim.replay.c_str());
  const bool same = sim.ok && sim.table == CandidateTable(space, r.minimal);
  std::printf("the file replays the explorer's run: %s\n", same ? "identical timeline" : "DIFFERENT timeline");
  if (!sim.matches || !same) {
    std::fprintf(stderr, "locklab: %s does not replay the finding%s\n", path.c_str(),
                 sim.error.empty() ? "" : (": " + sim.error).c_str());
    return kExitInternal;
  }
  if (f.confirm_real) {
    int agreed = 0;
    std::string replay;
    for (int i = 0; i < f.confirm_tries; ++i) {
      const FileReplay real = ReplayFoundFile(path, "redis");
      agreed += real.matches ? 1 : 0;
      replay = real.replay;
      if (!real.ok)
        std::printf("real Redis, try %d: the run did not complete: %s\n", i + 1, real.error.c_str());
      else
        std::printf("real Redis, try %d: %s (observed: %s)\n", i + 1, real.matches ? "agreed" : "did NOT reproduce it",
                    real.verdict.observed.c_str());
    }
    std::printf("real Redis agreed in %d of %d tries; replay: %s\n", agreed, f.confirm_tries, replay.c_str());
  }
  return kExitOk;
}

int RunExplore(const ExploreFlags& f, const ExploreSpace& space, const std::string& command) {
  if (f.run_seed >= 0) return ReplayRun(f, space);
  ExploreOptions o;
  o.space = space;
  o.seed = f.seed;
  o.budget_runs = f.budget_runs;
  o.budget_s = f.budget_s;
  o.jobs = f.jobs;
  o.shrink = !f.no_shrink;
  o.shrink_margin = f.shrink_margin;
  Progress(f, "explore: " + space.Text());
  const ExploreResult r = Explore(o, [&](const std::string& line) { Progress(f, line); });
  if (r.incomplete > 0)
    std::printf("note: %lld runs did not complete (not findings); the first: %s\n",
                static_cast<long long>(r.incomplete), r.first_error.c_str());
  if (r.found) return ReportFinding(f, o, r, command);
  std::printf("nothing found: the budget of %s ended (%lld runs, %lld simulator runs, %.1f s, %.0f runs/s)\n",
              r.stopped_by == "runs" ? (std::to_string(f.budget_runs) + " runs").c_str()
                                     : (DoubleText(f.budget_s) + " s").c_str(),
              static_cast<long long>(r.runs), static_cast<long long>(r.sim_runs), r.seconds,
              r.seconds > 0 ? static_cast<double>(r.runs) / r.seconds : 0.0);
  std::printf("space searched: %s\n", space.Text().c_str());
  std::printf("again: locklab explore %s --seed %llu --budget-runs %lld\n", SpaceFlags(space).c_str(),
              static_cast<unsigned long long>(f.seed), static_cast<long long>(r.runs));
  return kExitOk;
}

int RunFindabilityCommand(const ExploreFlags& f) {
  FindabilityOptions o;
  o.scenario_dir = f.scenario_dir;
  o.only = f.only;
  o.seeds = f.seeds;
  o.fixed_seeds = f.fixed_seeds;
  o.budget_runs = f.budget_runs;
  o.budget_s = f.budget_s;
  o.jobs = f.jobs;
  o.confirm_real = f.confirm_real;
  o.confirm_tries = f.confirm_tries;
  const std::string out = f.out.empty() ? "results/explore/findability.json" : f.out;
  const std::string dir = std::filesystem::path(out).parent_path().string();
  o.found_dir = !f.found_dir.empty() ? f.found_dir : (dir.empty() ? "." : dir) + "/found";
  Result<json> doc = RunFindability(o, [&](const std::string& line) { Progress(f, line); });
  if (!doc.ok()) return BadInput(doc.status().message());
  if (Status s = WriteFileAtomic(out, doc->dump(2) + "\n"); !s.ok()) {
    std::fprintf(stderr, "locklab: %s\n", s.message().c_str());
    return kExitInternal;
  }
  std::fputs(FindabilityTable(*doc).c_str(), stdout);
  std::printf("findability: %s\n", out.c_str());
  return kExitOk;
}

}  // namespace

void AddExploreFlags(CLI::App* app, ExploreFlags* f) {
  app->add_option("--algorithm", f->algorithm, "the lock to explore: NAME or NAME:opt=v,... (see `locklab list`)")
      ->type_name("ALG")
      ->capture_default_str();
  app->add_option("--workload", f->workload, "counter or seckill (default: the run's, counter)")->type_name("NAME");
  app->add_option("--clients", f->clients, "clients, each with its own program")->capture_default_str();
  app->add_option("--requests", f->requests, "requests per client")->capture_default_str();
  app->add_option("--ttl-ms", f->ttl_ms, "the lock's TTL")->type_name("MS")->capture_default_str();
  app->add_option("--faults", f->faults, "fault kinds to inject: KIND,KIND,... (see `locklab list`) or none")
      ->type_name("KINDS")
      ->capture_default_str();
  app->add_option("--range", f->ranges, "a range: NAME=LO-HI followed by ttl or ms (repeatable; see below)")
      ->type_name("NAME=RANGE")
      ->allow_extra_args(false);
  app->add_option("--max-faults", f->max_faults, "faults per run at most")->capture_default_str();
  app->add_option("--strategy", f->strategy, "swarm, targeted (PCT-like, at protocol points) or both (each run draws one)")
      ->capture_default_str();
  app->add_option("--find", f->find, "what counts as a finding: classes, comma-separated (see below)")
      ->type_name("CLASSES")
      ->capture_default_str();
  app->add_option("--liveness-bound-ms", f->liveness_bound_ms, "stuck: a waiter and no live holder this long (0: ttl + 2000)")
      ->type_name("MS");
  app->add_option("--retry", f->retry, "retry policy NAME[:opt=v,...]")->type_name("RETRY")->capture_default_str();
  app->add_option("--command-timeout-ms", f->command_timeout_ms, "a command with no reply by then is unknown")
      ->type_name("MS");
  app->add_option("--acquire-timeout-ms", f->acquire_timeout_ms, "a request gives up after this long")->type_name("MS");
  app->add_option("--stock", f->stock, "seckill: initial stock")->type_name("N");
  app->add_option("--app-servers", f->app_servers, "application servers the clients are spread over (local)")
      ->type_name("N");
  app->add_flag("--replica", f->replica, "node 0 has an asynchronous replica (needed by failover)");
  app->add_option("--node-min-down-ms", f->node_min_down_ms,
                  "Redlock's delayed restart: a node that went down stays down at least this long (0: off)")
      ->type_name("MS");
  app->add_option("--budget-runs", f->budget_runs, "stop after this many runs")->capture_default_str();
  app->add_option("--budget-s", f->budget_s, "stop after this many seconds")->type_name("S")->capture_default_str();
  app->add_option("--seed", f->seed, "the exploration's seed (run i draws from a seed derived from it)")
      ->capture_default_str();
  f->jobs = DefaultJobs();
  app->add_option("--jobs", f->jobs, "simulator runs at the same time (the finding is the same for any N)")
      ->type_name("N")
      ->check(JobsRange());
  app->add_option("--run-seed", f->run_seed, "replay one run of the space from its run seed (printed with a finding)")
      ->type_name("N");
  app->add_option("--out", f->out,
                  "the found scenario file (default results/explore/found-<algorithm>-<seed>.json); with "
                  "--findability the JSON (default results/explore/findability.json)")
      ->type_name("FILE");
  app->add_flag("--no-shrink", f->no_shrink, "report the first finding as found, without shrinking it");
  app->add_option("--shrink-margin", f->shrink_margin,
                  "added to each shrunk magnitude: max(this x value, 20 ms), so that real Redis's jitter does not "
                  "drop the race")
      ->capture_default_str();
  app->add_flag("--confirm-real", f->confirm_real,
                "replay the found scenario on real redis-server processes and say whether they agreed");
  app->add_option("--confirm-tries", f->confirm_tries,
                  "--confirm-real runs the file this many times on real Redis (its timing varies)")
      ->capture_default_str();
  app->add_flag("--no-progress", f->no_progress, "no progress lines on stderr");
  app->add_flag("--findability", f->findability,
                "the findability table: explore every hand-written scenario's broken and fixed variants");
  app->add_option("--seeds", f->seeds, "--findability: explore seeds per broken variant")->capture_default_str();
  app->add_option("--fixed-seeds", f->fixed_seeds, "--findability: explore seeds per fixed variant")
      ->capture_default_str();
  app->add_option("--only", f->only, "--findability: only this scenario (repeatable)")
      ->type_name("ID")
      ->allow_extra_args(false);
  app->add_option("--found-dir", f->found_dir,
                  "--findability: each variant's seed-1 shrunk scenario goes here (default: found/ beside the JSON)")
      ->type_name("DIR");
  app->add_option("--scenario-dir", f->scenario_dir, "--findability: the scenario files (default: the source tree's)")
      ->type_name("DIR");
  app->footer(kFooter);
}

ExploreCli::ExploreCli(CLI::App& app)
    : sub_(app.add_subcommand(
          "explore", "search fault schedules for a race nobody wrote down; shrink it to a scenario file; replay it")) {
  AddExploreFlags(sub_, &flags_);
}

int ExploreCommand(const ExploreFlags& f, const std::string& command) {
  if (f.budget_runs < 1 || f.budget_runs > kMaxExploreRuns)
    return BadInput("--budget-runs must be in [1, " + std::to_string(kMaxExploreRuns) + "]");
  if (!(f.budget_s > 0) || !std::isfinite(f.budget_s) || f.budget_s > 86400)
    return BadInput("--budget-s must be in (0, 86400]");
  if (!(f.shrink_margin >= 0) || f.shrink_margin > 10) return BadInput("--shrink-margin must be in [0, 10]");
  if (f.confirm_tries < 1 || f.confirm_tries > 100) return BadInput("--confirm-tries must be in [1, 100]");
  if (f.findability) {
    if (f.seeds < 1 || f.seeds > 1000 || f.fixed_seeds < 0 || f.fixed_seeds > 1000)
      return BadInput("--seeds must be in [1, 1000] and --fixed-seeds in [0, 1000]");
    if (f.run_seed >= 0) return BadInput("--run-seed replays one run of one space: not with --findability");
    return RunFindabilityCommand(f);
  }
  if (!f.only.empty() || !f.found_dir.empty()) return BadInput("--only and --found-dir go with --findability");
  Result<ExploreSpace> space = SpaceFromFlags(f);
  if (!space.ok()) return BadInput(space.status().message());
  return RunExplore(f, *space, command);
}

}  // namespace locklab
