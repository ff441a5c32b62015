#include "harness/report/merge.h"

#include <nlohmann/json.hpp>

#include "harness/report/report.h"
#include "harness/report/results_jsonl.h"
#include "harness/run/sweep_shard.h"

namespace locklab {
namespace {

using nlohmann::json;

// "runs 3, 6, 9 and 4 more": the first few numbers of a list, for a one-line message.
std::string FewNumbers(const std::vector<size_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 5; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > 5) s += " and " + std::to_string(v.size() - 5) + " more";
  return s;
}

bool IsReport(const std::string& text, json* parsed) {
  *parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed->is_object() && parsed->value("schema", "") == kReportSchema;
}

// A shard report's "shard" object, checked.
struct ShardInfo {
  Shard shard;
  size_t runs_total = 0;
  std::string sweep;
};

Result<ShardInfo> ReadShardInfo(const MergeInput& in, const json& report) {
  const json* s = report.contains("shard") ? &report["shard"] : nullptr;
  if (s == nullptr || !s->is_object())
    return Status::Invalid(in.name + ": not a shard's report (no \"shard\"; write it with locklab run --shard I/N)");
  ShardInfo info;
  try {
    info.shard.index = s->at("index").get<int>();
    info.shard.count = s->at("count").get<int>();
    info.runs_total = s->at("runs").get<size_t>();
    info.sweep = s->at("sweep").get<std::string>();
  } catch (const json::exception&) {
    return Status::Invalid(in.name + ": its \"shard\" needs index, count, runs and sweep");
  }
  if (info.shard.count < 1 || info.shard.count > kMaxShards || info.shard.index < 1 ||
      info.shard.index > info.shard.count)
    return Status::Invalid(in.name + ": shard " + std::to_string(info.shard.index) + "/" +
                           std::to_string(info.shard.count) + " is out of range");
  if (!report.contains("runs") || !report["runs"].is_array())
    return Status::Invalid(in.name + ": a report without a \"runs\" list");
  return info;
}

// What must be the same in every shard of a sweep: the report without its runs and shard
// (the host and start time of a redis-backend report may differ).
json Common(json report) {
  report.erase("runs");
  report.erase("shard");
  if (report.contains("context") && report["context"].is_object()) {
    report["context"].erase("host");
    report["context"].erase("started_at");
  }
  return report;
}

Result<std::string> MergeReports(const std::vector<MergeInput>& inputs, std::vector<json> reports) {
  std::vector<ShardInfo> infos;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Result<ShardInfo> info = ReadShardInfo(inputs[k], reports[k]);
    if (!info.ok()) return info.status();
    infos.push_back(*info);
  }
  const ShardInfo& first = infos[0];
  const json common = Common(reports[0]);
  std::vector<int> given(static_cast<size_t>(first.shard.count), -1);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const ShardInfo& s = infos[k];
    if (s.sweep != first.sweep || s.shard.count != first.shard.count || s.runs_total != first.runs_total ||
        Common(reports[k]) != common)
      return Status::Invalid(inputs[k].name + ": a shard of a different sweep (or build) than " + inputs[0].name);
    int& slot = given[static_cast<size_t>(s.shard.index - 1)];
    if (slot >= 0)
      return Status::Invalid("shard " + std::to_string(s.shard.index) + "/" + std::to_string(s.shard.count) +
                             " is given twice: " + inputs[static_cast<size_t>(slot)].name + " and " + inputs[k].name);
    slot = static_cast<int>(k);
  }
  std::vector<size_t> missing;
  for (size_t i = 0; i < given.size(); ++i)
    if (given[i] < 0) missing.push_back(i + 1);
  if (!missing.empty())
    return Status::Invalid("shard(s) " + FewNumbers(missing) + " of " + std::to_string(first.shard.count) +
                           " missing");
  std::vector<json> runs(first.runs_total);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<size_t> slice = ShardRuns(first.runs_total, infos[k].shard);
    json& list = reports[k]["runs"];
    if (list.size() != slice.size())
      return Status::Invalid(inputs[k].name + ": holds " + std::to_string(list.size()) + " runs, its shard has " +
                             std::to_string(slice.size()));
    for (size_t j = 0; j < slice.size(); ++j) runs[slice[j]] = std::move(list[j]);
  }
  // Shard 1's context: the one the unsharded sweep's report has (a redis report's host and start
  // time are those of its first shard).
  json out = std::move(reports[static_cast<size_t>(given[0])]);
  out.erase("shard");
  out["runs"] = std::move(runs);
  return ReportText(out);
}

struct Line {
  size_t run = 0;
  std::string text;
};

// Every line of one input, checked against the sweep of the first line seen.
Status ReadLines(const MergeInput& in, std::string* sweep, size_t* runs_total, std::vector<Line>* out) {
  size_t pos = 0;
  for (size_t n = 1; pos < in.text.size(); ++n) {
    const size_t end = in.text.find('\n', pos);
    if (end == std::string::npos) return Status::Invalid(in.name + ": line " + std::to_string(n) + " has no end");
    Line line{0, in.text.substr(pos, end - pos)};
    pos = end + 1;
    const std::string where = in.name + ":" + std::to_string(n) + ": ";
    const json j = json::parse(line.text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || j.value("schema", "") != kResultsSchema)
      return Status::Invalid(where + "not a locklab report or results line");
    try {
      line.run = j.at("run").get<size_t>();
      const size_t total = j.at("runs").get<size_t>();
      const std::string s = j.at("sweep").get<std::string>();
      if (sweep->empty()) {
        *sweep = s;
        *runs_total = total;
      }
      if (s != *sweep || total != *runs_total)
        return Status::Invalid(where + "a run of a different sweep (or build) than the first input's");
    } catch (const json::exception&) {
      return Status::Invalid(where + "a results line needs run, runs and sweep");
    }
    if (line.run < 1 || line.run > *runs_total)
      return Status::Invalid(where + "run " + std::to_string(line.run) + " is out of range");
    out->push_back(std::move(line));
  }
  return Status::Ok();
}

Result<std::string> MergeResults(const std::vector<MergeInput>& inputs) {
  std::string sweep;
  size_t runs_total = 0;
  std::vector<Line> lines;
  for (const MergeInput& in : inputs) LOCKLAB_RETURN_IF_ERROR(ReadLines(in, &sweep, &runs_total, &lines));
  if (lines.empty()) return Status::Invalid("no runs in the inputs");
  std::vector<const std::string*> by_run(runs_total, nullptr);
  for (const Line& l : lines) {
    if (by_run[l.run - 1] != nullptr)
      return Status::Invalid("run " + std::to_string(l.run) + " is given twice (a shard given twice?)");
    by_run[l.run - 1] = &l.text;
  }
  std::vector<size_t> missing;
  for (size_t i = 0; i < runs_total; ++i)
    if (by_run[i] == nullptr) missing.push_back(i + 1);
  if (!missing.empty())
    return Status::Invalid("runs " + FewNumbers(missing) + " of " + std::to_string(runs_total) +
                           " are in no input (a shard missing?)");
  std::string out;
  for (const std::string* t : by_run) out += *t + "\n";
  return out;
}

}  // namespace

Result<std::string> MergeShards(const std::vector<MergeInput>& inputs) {
  if (inputs.empty()) return Status::Invalid("give the shards' outputs to merge");
  if (inputs.size() > kMaxMergeInputs)
    return Status::Invalid("at most " + std::to_string(kMaxMergeInputs) + " inputs");
  std::vector<json> reports;
  for (const MergeInput& in : inputs) {
    json parsed;
    if (IsReport(in.text, &parsed)) reports.push_back(std::move(parsed));
    if (!reports.empty() && reports.size() != static_cast<size_t>(&in - &inputs[0]) + 1)
      return Status::Invalid(in.name + ": reports and results lines cannot be merged together");
  }
  if (!reports.empty()) return MergeReports(inputs, std::move(reports));
  return MergeResults(inputs);
}

}  // namespace locklab
