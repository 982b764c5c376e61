// Critical-path list scheduling of launches onto CUDA streams, with events
// only where an edge crosses streams and is not already ordered.
//
// The schedule is a host issue order (a topological order of the launches:
// the runtime enqueues in this order, so every event is recorded before it
// is waited on), a stream per launch, and the events. A dependency u -> v is
// honoured when u and v share a stream (FIFO order) or when a chain of
// stream orders and events leads from u to v.
#ifndef STRATA_CODEGEN_STREAMSCHEDULER_H
#define STRATA_CODEGEN_STREAMSCHEDULER_H

#include "codegen/LaunchGraph.h"

#include <string>
#include <vector>

namespace strata::sched {

struct ScheduleOptions {
  /// Streams available (>= 1).
  int maxStreams = 1;
  /// Estimated cost of a cross-stream event wait, in the launches' cost
  /// unit; it discourages moving a launch away from its predecessor's
  /// stream for little gain.
  double eventCost = 0.0;
};

/// A cross-stream wait: record after `from` on its stream, wait before `to`.
struct Event {
  int from = 0;
  int to = 0;
  bool operator==(const Event &o) const { return from == o.from && to == o.to; }
};

struct Schedule {
  /// Launch ids in host issue order.
  std::vector<int> issueOrder;
  /// Stream of each launch (indexed by launch id).
  std::vector<int> stream;
  /// Launch ids of each stream in execution order.
  std::vector<std::vector<int>> streams;
  std::vector<Event> events;
  /// Estimated finish time of the last launch under the cost model.
  double makespan = 0.0;
};

/// Schedules `nodes` (program order) given their dependencies. Deterministic:
/// the same input gives the same schedule.
Schedule scheduleLaunches(const std::vector<LaunchNode> &nodes,
                          const std::vector<Dependency> &deps,
                          const ScheduleOptions &options);

/// Empty when every dependency is ordered by stream order or events and the
/// issue order is a topological order; else the first violation in words.
std::string checkSchedule(int numNodes, const std::vector<Dependency> &deps,
                          const Schedule &schedule);

/// Happens-before on a schedule (stream order + events), kept as vector
/// clocks: for each launch, the latest position of every stream known to
/// have finished before it. O(streams) memory per launch, O(1) per query.
/// Built from a finished schedule, or launch by launch while events are
/// being chosen.
class HappensBefore {
public:
  HappensBefore(int numNodes, int numStreams);
  HappensBefore(int numNodes, const Schedule &schedule);

  /// Launches must begin in issue order; a launch's clock starts as the
  /// previous launch's on the same stream.
  void begin(int v, int stream);
  /// `v` (begun, not ended) waits for `u` (ended) through an event.
  void addWait(int v, int u);
  void end(int v);

  /// True when `u` finishes before `v` starts on the device. Valid once
  /// `u` has ended and `v` has begun.
  bool operator()(int u, int v) const;

private:
  std::vector<int> stream_;
  std::vector<int> position_; // 1-based position within its stream
  std::vector<std::vector<int>> clock_;
  std::vector<int> streamLength_;
  std::vector<int> lastOnStream_;
};

} // namespace strata::sched

#endif // STRATA_CODEGEN_STREAMSCHEDULER_H
