// calib::ReplicaTrips (calibrate_internal.h): the master-to-replica trip, for
// CostModel::replica_one_way_us.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "harness/real/calibrate_internal.h"

namespace locklab::calib {

Status ReplicaTrips(int master_port, const Sizes& sizes, NodeSamples* out) {
  Result<Conn> conn = Connect(master_port);
  if (!conn.ok()) return conn.status().Prefixed("replica trips: connect");
  std::vector<double> wait_us, ping_us;
  for (int i = 0; i < sizes.replica_pairs; ++i) {
    if (Result<std::string> r = Query(*conn, {"SET", "calib:repl", std::to_string(i)}); !r.ok())
      return r.status().Prefixed("replica trips: SET");
    const double t0 = SteadyUs();
    Result<std::string> acked = Query(*conn, {"WAIT", "1", "1000"});
    const double t1 = SteadyUs();
    if (!acked.ok()) return acked.status().Prefixed("replica trips: WAIT");
    if (*acked != "1")
      return Status::Failed("replica trips: WAIT 1 1000 answered " + *acked + ": the replica did not acknowledge in 1 s");
    if (Result<std::string> p = Query(*conn, {"PING"}); !p.ok()) return p.status().Prefixed("replica trips: PING");
    wait_us.push_back(t1 - t0);
    ping_us.push_back(SteadyUs() - t1);
  }
  // Medians: a pair that the machine stalled (a VM's vCPU descheduled for a millisecond) would
  // move a mean of 50 pairs by more than the trip itself.
  const auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  out->replica_wait_us.push_back(median(wait_us));
  out->replica_ping_us.push_back(median(ping_us));
  return Status::Ok();
}

}  // namespace locklab::calib
