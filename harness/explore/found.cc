#include "harness/explore/found.h"

#include "harness/scenario/scenario_text.h"

namespace locklab {

nlohmann::json FoundScenarioDoc(const ExploreOptions& o, const ExploreResult& r, const std::string& command) {
  const ExploreSpace& s = o.space;
  ScenarioText text;
  std::string alg_id;
  for (char ch : s.algorithm) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    const char c = ok ? ch : (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : '-';
    if (c == '-' && (alg_id.empty() || alg_id.back() == '-')) continue;
    alg_id += c;
  }
  while (!alg_id.empty() && alg_id.back() == '-') alg_id.pop_back();
  text.id = "found-" + (alg_id.empty() ? std::string("lock") : alg_id) + "-" + std::to_string(o.seed);
  text.title = "found by locklab explore: " + FindingsText(r.minimal_observed, s.find) + " with " + s.algorithm;
  text.note = FindingsText(r.minimal_observed, s.find);
  text.story = "Found by `" + command + "` in run " + std::to_string(r.found_run) + " (run seed " +
               std::to_string(r.finding.run_seed) + ", " + StrategyName(r.finding.strategy) + ", " +
               std::to_string(r.finding.candidate.faults.size()) + " faults, " +
               std::to_string(r.finding.candidate.clients.size()) + " clients), shrunk in " +
               std::to_string(r.shrink_stats.tries) + " runs" + FewerFaultsText(r) + " to " +
               std::to_string(r.minimal.faults.size()) + " faults and " + std::to_string(r.minimal.clients.size()) +
               " clients. Space: " + s.Text();
  return CandidateScenario(s, r.minimal, ExpectFor(r.minimal_observed, s.find), text);
}

FileReplay ReplayFoundFile(const std::string& path, const std::string& backend) {
  FileReplay out;
  Result<Scenario> sc = LoadScenario(path);
  if (!sc.ok()) {
    out.error = sc.status().message();
    return out;
  }
  if (sc->doc.contains("steps")) out.faults = sc->doc["steps"].size();
  Result<ScenarioRun> run = CompileVariant(*sc, "found", {}, backend, 1, nullptr);
  if (!run.ok()) {
    out.error = run.status().message();
    return out;
  }
  RunResult r = RunOne(run->spec, false, /*keep_events=*/true);
  out.ok = r.completed;
  if (!out.ok) out.error = r.error;
  out.verdict = Judge(*run, r);
  out.matches = out.ok && out.verdict.matches;
  out.table = ScenarioTimelineTable(run->client_names, r.events, HoldersAllowed(run->spec));
  out.replay = run->replay;
  out.notes = r.notes;
  return out;
}

std::string CandidateTable(const ExploreSpace& space, const Candidate& c) {
  const CandidateRun r = RunCandidate(space, c);
  if (!r.ok) return "";
  return ScenarioTimelineTable(r.run.client_names, r.result.events, HoldersAllowed(r.run.spec));
}

}  // namespace locklab
