// calib::ReplicaTrips (calibrate_internal.h): the master-to-replica trip, for
// CostModel::replica_one_way_us.
#include <string>
#include <utility>
#include <vector>

#include "harness/check/checkers.h"
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
  // Medians (nearest rank, as Summarize): a pair that the machine stalled (a VM's vCPU descheduled
  // for a millisecond) would move a mean of 50 pairs by more than the trip itself.
  out->replica_wait_us.push_back(Summarize(std::move(wait_us)).p50);
  out->replica_ping_us.push_back(Summarize(std::move(ping_us)).p50);
  return Status::Ok();
}

}  // namespace locklab::calib
