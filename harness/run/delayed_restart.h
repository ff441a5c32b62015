// Redlock's delayed restart (RunSpec::node_min_down_ms): a node that went down stays down at
// least a given time, so that every lock it granted has expired elsewhere before it answers again
// (the Redis documentation's remedy for a node restarted without persistence).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/fault.h"

namespace locklab {

// The planned faults with every restart_node moved to no sooner than min_down_us after its node
// went down: after a crash_node of that node, to at least the crash's time + min_down_us; a
// restart_node of a node that is up (it restarts: it goes down at that instant) becomes a
// crash_node at its time and the restart min_down_us later. A crash_node of a node that is down
// then (as the moved restarts have it) and a second restart_node of one down period are
// dropped: nothing more is lost, and the node comes back once. The rest keep their order.
// min_down_us <= 0: the plan as it is. Node faults are always timed (at_us, after any window's
// draw).
std::vector<FaultAction> DelayRestarts(const std::vector<FaultAction>& plan, int64_t min_down_us);

}  // namespace locklab
