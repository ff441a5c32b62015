#include "harness/cli/validate_recorded.h"


#include "harness/run/config.h"
#include "harness/run/read_file.h"

namespace locklab {
namespace {

using json = nlohmann::json;

// A configuration as the JSON records it, without what does not change a real run.
json Comparable(json config) {
  config.erase("backend");
  config.erase("seed");
  config.erase("profile");
  return config;
}

std::optional<Figure> FigureAt(const json& sample, MetricKind kind, size_t i) {
  const json& v = sample.at("per_seed").at(i);
  if (v.is_null()) return std::nullopt;
  if (kind == MetricKind::kRate) return Figure{sample.at("events").at(i).get<double>(), sample.at("trials").at(i).get<double>()};
  return Figure{v.get<double>(), 1};
}

}  // namespace

Result<RecordedValidation> RecordedValidation::Load(const std::string& path) {
  Result<std::string> text = ReadFileText(path);
  if (!text.ok()) return Status::Invalid("--real-from " + text.status().message());
  RecordedValidation r;
  r.path_ = path;
  r.doc_ = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (r.doc_.is_discarded() || !r.doc_.is_object() || r.doc_.value("schema", "") != kValidationSchema ||
      !r.doc_.contains("groups"))
    return Status::Invalid("--real-from " + path + ": not a " + kValidationSchema + " file");
  return r;
}

Result<std::optional<RecordedReal>> RecordedValidation::Find(const std::string& group, const std::string& name,
                                                            const RunSpec& base, const std::vector<MetricId>& metrics,
                                                            const std::vector<uint64_t>& seeds, bool any_seeds) const {
  const std::string what = "--real-from " + path_ + ": " + group + " " + name;
  try {
    for (const json& g : doc_.at("groups")) {
      if (g.value("name", "") != group) continue;
      for (const json& e : g.at("experiments")) {
        if (e.value("name", "") != name) continue;
        if (Comparable(e.at("config")) != Comparable(ToJson(base))) return std::optional<RecordedReal>();
        if (e.contains("real_sources"))
          return Status::Invalid(what + ": its real runs were pooled from several files; name those files instead");
        const std::vector<uint64_t> recorded_seeds = e.at("seeds").get<std::vector<uint64_t>>();
        if (!any_seeds && recorded_seeds != seeds) return std::optional<RecordedReal>();
        RecordedReal out;
        for (MetricId id : metrics) {
          const MetricInfo& info = MetricInfoOf(id);
          const json* found = nullptr;
          for (const json& m : e.at("metrics"))
            if (m.value("name", "") == info.name) found = &m;
          std::vector<std::optional<Figure>> by_seed;
          if (found == nullptr) {  // a metric added since that file was made: no real value (n/a)
            out.by_metric.emplace_back(recorded_seeds.size());
            continue;
          }
          for (size_t i = 0; i < recorded_seeds.size(); ++i)
            by_seed.push_back(FigureAt(found->at("real"), info.kind, i));
          out.by_metric.push_back(std::move(by_seed));
        }
        for (const json& r : e.at("runs")) {
          if (r.value("backend", "") != "redis") continue;
          out.runs.push_back({"redis", r.at("seed").get<uint64_t>(), r.at("completed").get<bool>(),
                              r.value("error", ""), r.value("replay", ""), r.value("wall_s", 0.0)});
        }
        return std::optional<RecordedReal>(std::move(out));
      }
    }
  } catch (const json::exception& ex) {
    return Status::Invalid(what + ": malformed (" + ex.what() + ")");
  }
  return std::optional<RecordedReal>();
}

Result<std::optional<RecordedReal>> FindPooled(const std::vector<RecordedValidation>& files, const std::string& group,
                                               const std::string& name, const RunSpec& base,
                                               const std::vector<MetricId>& metrics) {
  std::optional<RecordedReal> pooled;
  for (size_t f = 0; f < files.size(); ++f) {
    Result<std::optional<RecordedReal>> r = files[f].Find(group, name, base, metrics, {}, /*any_seeds=*/true);
    if (!r.ok()) return r.status();
    if (!*r) continue;
    if (!pooled) pooled = RecordedReal{std::vector<std::vector<std::optional<Figure>>>(metrics.size()), {}, {}};
    for (size_t m = 0; m < metrics.size(); ++m)
      pooled->by_metric[m].insert(pooled->by_metric[m].end(), (*r)->by_metric[m].begin(), (*r)->by_metric[m].end());
    pooled->sources.insert(pooled->sources.end(), (*r)->by_metric.empty() ? 0 : (*r)->by_metric[0].size(),
                           static_cast<int>(f));
    pooled->runs.insert(pooled->runs.end(), (*r)->runs.begin(), (*r)->runs.end());
  }
  return pooled;
}

json RecordedValidation::Source() const {
  const json& c = doc_.value("context", json::object());
  return {{"file", path_}, {"date", c.value("date", "")}, {"sha", c.value("sha", "")}, {"host", c.value("host", "")}};
}

}  // namespace locklab
