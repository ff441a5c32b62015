// Real-Redis figures recorded by an earlier `locklab validate` (its JSON), for `--real-from`:
// real runs are slow (an hour for the full set) and do not depend on the simulator's cost
// profile, so a new profile can be judged against real runs already made. An experiment is
// reused only when its group, name, configuration (less the profile, which real runs ignore)
// and seeds are the same as now; any other runs on real Redis again.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/cli/validate.h"

namespace locklab {

struct RecordedReal {
  std::vector<std::vector<std::optional<Figure>>> by_metric;  // per metric asked, per recorded run
  std::vector<ValidateRun> runs;                              // the recorded real runs
  std::vector<int> sources;  // pooled: the file (its index in --real-from's order) of each run; else empty
};

class RecordedValidation {
 public:
  // Reads a locklab.validation/1 file: Invalid naming the file and what is wrong.
  static Result<RecordedValidation> Load(const std::string& path);
  // The recorded real figures of one experiment as it is planned now; nullopt when the file
  // does not have it so (absent, another configuration or, unless any_seeds, other seeds). A
  // metric the file lacks (added since it was made) has no figure in any run. Invalid:
  // malformed, or the file pooled its real runs from several files (name those instead).
  Result<std::optional<RecordedReal>> Find(const std::string& group, const std::string& name, const RunSpec& base,
                                           const std::vector<MetricId>& metrics, const std::vector<uint64_t>& seeds,
                                           bool any_seeds = false) const;
  // For the new file's context: where the real figures come from ({file, date, sha, host}).
  nlohmann::json Source() const;

 private:
  std::string path_;
  nlohmann::json doc_;
};

// --real-from given more than once: the sittings pooled. An experiment's real figures are every
// run recorded for it with the same configuration in any of the files, whatever its seeds, in
// the files' order (RecordedReal::sources says which file each came from): real Redis on one
// machine moves between sittings more than between seeds of one sitting (README, Validation),
// so a sitting alone is a sample of one machine state. nullopt when no file has it.
Result<std::optional<RecordedReal>> FindPooled(const std::vector<RecordedValidation>& files, const std::string& group,
                                               const std::string& name, const RunSpec& base,
                                               const std::vector<MetricId>& metrics);

}  // namespace locklab
