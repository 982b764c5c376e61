#include "codegen/StreamScheduler.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <iterator>
#include <limits>

namespace strata::sched {

namespace {

using Dag =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

Dag buildDag(int numNodes, const std::vector<Edge> &edges) {
  Dag dag(numNodes);
  for (const Edge &e : edges)
    boost::add_edge(e.first, e.second, dag);
  return dag;
}

/// Longest cost-weighted path from each node to a sink, the node included.
std::vector<double> bottomLevels(const Dag &dag,
                                 const std::vector<LaunchNode> &nodes) {
  std::vector<Dag::vertex_descriptor> reverseTopo;
  boost::topological_sort(dag, std::back_inserter(reverseTopo));
  std::vector<double> level(nodes.size(), 0.0);
  for (auto v : reverseTopo) {
    double best = 0.0;
    for (auto e : boost::make_iterator_range(boost::out_edges(v, dag)))
      best = std::max(best, level[boost::target(e, dag)]);
    level[v] = nodes[v].cost + best;
  }
  return level;
}

} // namespace

Schedule scheduleLaunches(const std::vector<LaunchNode> &nodes,
                          const std::vector<Dependency> &deps,
                          const ScheduleOptions &options) {
  const int n = static_cast<int>(nodes.size());
  const int numStreams = std::max(1, options.maxStreams);
  Dag dag = buildDag(n, transitiveReduction(n, deps));
  std::vector<double> level = bottomLevels(dag, nodes);

  Schedule schedule;
  schedule.stream.assign(n, -1);
  schedule.streams.assign(numStreams, {});
  std::vector<double> finish(n, 0.0);
  std::vector<double> streamFree(numStreams, 0.0);
  std::vector<int> waiting(n, 0);
  for (int v = 0; v < n; ++v)
    waiting[v] = static_cast<int>(boost::in_degree(v, dag));
  std::vector<int> ready;
  for (int v = 0; v < n; ++v)
    if (waiting[v] == 0)
      ready.push_back(v);

  while (!ready.empty()) {
    // Most critical ready launch first; program order breaks ties.
    auto pick = std::min_element(ready.begin(), ready.end(), [&](int a, int b) {
      return level[a] > level[b] || (level[a] == level[b] && a < b);
    });
    int v = *pick;
    ready.erase(pick);

    // The predecessor that finishes last: staying on its stream saves an
    // event on the critical edge.
    int criticalStream = -1;
    double criticalFinish = -1.0;
    for (auto e : boost::make_iterator_range(boost::in_edges(v, dag))) {
      int u = static_cast<int>(boost::source(e, dag));
      if (finish[u] > criticalFinish) {
        criticalFinish = finish[u];
        criticalStream = schedule.stream[u];
      }
    }
    int bestStream = 0;
    double bestStart = std::numeric_limits<double>::infinity();
    for (int s = 0; s < numStreams; ++s) {
      double start = streamFree[s];
      for (auto e : boost::make_iterator_range(boost::in_edges(v, dag))) {
        int u = static_cast<int>(boost::source(e, dag));
        double wait = schedule.stream[u] == s ? 0.0 : options.eventCost;
        start = std::max(start, finish[u] + wait);
      }
      bool better =
          start < bestStart || (start == bestStart && s == criticalStream &&
                                bestStream != criticalStream);
      if (better) {
        bestStart = start;
        bestStream = s;
      }
    }
    schedule.stream[v] = bestStream;
    schedule.streams[bestStream].push_back(v);
    schedule.issueOrder.push_back(v);
    finish[v] = bestStart + nodes[v].cost;
    streamFree[bestStream] = finish[v];
    schedule.makespan = std::max(schedule.makespan, finish[v]);

    for (auto e : boost::make_iterator_range(boost::out_edges(v, dag))) {
      int w = static_cast<int>(boost::target(e, dag));
      if (--waiting[w] == 0)
        ready.push_back(w);
    }
  }

  // Events: walk the issue order; a cross-stream predecessor needs an event
  // only if the clocks do not already order it. Later predecessors first,
  // as their events cover earlier ones.
  std::vector<int> issueIndex(n, 0);
  for (int i = 0; i < n; ++i)
    issueIndex[schedule.issueOrder[i]] = i;
  HappensBefore before(n, numStreams);
  for (int v : schedule.issueOrder) {
    int s = schedule.stream[v];
    before.begin(v, s);
    std::vector<int> preds;
    for (auto e : boost::make_iterator_range(boost::in_edges(v, dag))) {
      int u = static_cast<int>(boost::source(e, dag));
      if (schedule.stream[u] != s)
        preds.push_back(u);
    }
    std::sort(preds.begin(), preds.end(),
              [&](int a, int b) { return issueIndex[a] > issueIndex[b]; });
    for (int u : preds) {
      if (before(u, v))
        continue;
      schedule.events.push_back({u, v});
      before.addWait(v, u);
    }
    before.end(v);
  }
  return schedule;
}

HappensBefore::HappensBefore(int numNodes, int numStreams)
    : stream_(numNodes, -1), position_(numNodes, 0), clock_(numNodes),
      streamLength_(numStreams, 0), lastOnStream_(numStreams, -1) {}

HappensBefore::HappensBefore(int numNodes, const Schedule &schedule)
    : HappensBefore(numNodes, static_cast<int>(schedule.streams.size())) {
  std::vector<std::vector<int>> waitsFor(numNodes);
  for (const Event &e : schedule.events)
    waitsFor[e.to].push_back(e.from);
  for (int v : schedule.issueOrder) {
    begin(v, schedule.stream[v]);
    for (int u : waitsFor[v])
      addWait(v, u);
    end(v);
  }
}

void HappensBefore::begin(int v, int stream) {
  stream_[v] = stream;
  int last = lastOnStream_[stream];
  clock_[v] =
      last >= 0 ? clock_[last] : std::vector<int>(streamLength_.size(), 0);
}

void HappensBefore::addWait(int v, int u) {
  for (size_t t = 0; t < clock_[v].size(); ++t)
    clock_[v][t] = std::max(clock_[v][t], clock_[u][t]);
}

void HappensBefore::end(int v) {
  int s = stream_[v];
  position_[v] = ++streamLength_[s];
  clock_[v][s] = position_[v];
  lastOnStream_[s] = v;
}

bool HappensBefore::operator()(int u, int v) const {
  if (u == v)
    return false;
  if (stream_[u] == stream_[v])
    return position_[v] == 0 || position_[u] < position_[v];
  return clock_[v][stream_[u]] >= position_[u];
}

std::string checkSchedule(int numNodes, const std::vector<Dependency> &deps,
                          const Schedule &schedule) {
  if (static_cast<int>(schedule.issueOrder.size()) != numNodes)
    return "issue order has " + std::to_string(schedule.issueOrder.size()) +
           " launches, expected " + std::to_string(numNodes);
  std::vector<int> issueIndex(numNodes, -1);
  for (int i = 0; i < numNodes; ++i) {
    int v = schedule.issueOrder[i];
    if (v < 0 || v >= numNodes || issueIndex[v] >= 0)
      return "issue order is not a permutation of the launches";
    issueIndex[v] = i;
  }
  for (const Event &e : schedule.events)
    if (issueIndex[e.from] > issueIndex[e.to])
      return "event " + std::to_string(e.from) + " -> " + std::to_string(e.to) +
             " is waited on before it is recorded";
  HappensBefore before(numNodes, schedule);
  for (const Dependency &d : deps) {
    if (issueIndex[d.from] > issueIndex[d.to])
      return "launch " + std::to_string(d.to) + " is issued before " +
             std::to_string(d.from) + " it depends on";
    if (!before(d.from, d.to))
      return std::string(toString(d.hazard)) + " dependency " +
             std::to_string(d.from) + " -> " + std::to_string(d.to) +
             " on resource " + std::to_string(d.resource) +
             " is not ordered by the streams and events";
  }
  return "";
}

} // namespace strata::sched
