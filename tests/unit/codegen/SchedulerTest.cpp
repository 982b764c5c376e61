// The stream scheduler on synthetic launch graphs: hazards found, reduction
// correct, every dependency ordered by streams or events, events only where
// needed, and the same schedule every time.
#include "codegen/StreamScheduler.h"

#include <catch2/catch.hpp>

#include <random>
#include <set>

using namespace strata::sched;

namespace {

ResourceUse rd(int64_t r) { return {r, Access::Read}; }
ResourceUse wr(int64_t r) { return {r, Access::Write}; }
ResourceUse rw(int64_t r) { return {r, Access::ReadWrite}; }

LaunchNode node(const std::string &name, double cost,
                std::vector<ResourceUse> uses) {
  return LaunchNode{name, cost, std::move(uses)};
}

Schedule scheduleAndCheck(const std::vector<LaunchNode> &nodes, int streams) {
  auto deps = findDependencies(nodes);
  ScheduleOptions options;
  options.maxStreams = streams;
  Schedule s = scheduleLaunches(nodes, deps, options);
  INFO(checkSchedule(static_cast<int>(nodes.size()), deps, s));
  CHECK(checkSchedule(static_cast<int>(nodes.size()), deps, s).empty());
  return s;
}

} // namespace

TEST_CASE("hazards: read-after-write, write-after-read, write-after-write") {
  std::vector<LaunchNode> nodes = {
      node("w0", 1, {wr(1)}), node("r1", 1, {rd(1)}), node("r2", 1, {rd(1)}),
      node("w3", 1, {wr(1)})};
  auto deps = findDependencies(nodes);
  std::set<std::tuple<int, int, Hazard>> got;
  for (const auto &d : deps)
    got.insert({d.from, d.to, d.hazard});
  std::set<std::tuple<int, int, Hazard>> expected = {
      {0, 1, Hazard::ReadAfterWrite},
      {0, 2, Hazard::ReadAfterWrite},
      {1, 3, Hazard::WriteAfterRead},
      {2, 3, Hazard::WriteAfterRead},
      {0, 3, Hazard::WriteAfterWrite}};
  CHECK(got == expected);
  // 0 -> 3 is implied by 0 -> 1 -> 3.
  CHECK(transitiveReduction(4, deps) ==
        std::vector<Edge>{{0, 1}, {0, 2}, {1, 3}, {2, 3}});
}

TEST_CASE("a read-modify-write resource (KV cache) chains its users") {
  std::vector<LaunchNode> nodes = {node("append0", 1, {rw(9)}),
                                   node("attn0", 1, {rd(9)}),
                                   node("append1", 1, {rw(9)})};
  auto deps = findDependencies(nodes);
  CHECK(transitiveReduction(3, deps) == std::vector<Edge>{{0, 1}, {1, 2}});
}

TEST_CASE("a chain stays on one stream with no events") {
  std::vector<LaunchNode> nodes;
  for (int i = 0; i < 6; ++i)
    nodes.push_back(node("n" + std::to_string(i), 1, {rd(i), wr(i + 1)}));
  Schedule s = scheduleAndCheck(nodes, 4);
  CHECK(s.events.empty());
  for (int i = 1; i < 6; ++i)
    CHECK(s.stream[i] == s.stream[0]);
  CHECK(s.makespan == Approx(6.0));
}

TEST_CASE("a diamond runs its branches on two streams joined by one event") {
  // a -> {b, c} -> d
  std::vector<LaunchNode> nodes = {
      node("a", 1, {wr(1)}), node("b", 4, {rd(1), wr(2)}),
      node("c", 4, {rd(1), wr(3)}), node("d", 1, {rd(2), rd(3), wr(4)})};
  Schedule s = scheduleAndCheck(nodes, 2);
  CHECK(s.stream[1] != s.stream[2]);
  CHECK(s.makespan == Approx(6.0));
  // One fork event (a -> the branch on the other stream) and one join event.
  CHECK(s.events.size() == 2);
  // With one stream the same graph serialises with no events.
  Schedule serial = scheduleAndCheck(nodes, 1);
  CHECK(serial.events.empty());
  CHECK(serial.makespan == Approx(10.0));
}

TEST_CASE("independent branches spread over the streams") {
  std::vector<LaunchNode> nodes;
  for (int b = 0; b < 4; ++b)
    for (int i = 0; i < 3; ++i)
      nodes.push_back(node("b" + std::to_string(b), 1,
                           {rd(100 * b + i), wr(100 * b + i + 1)}));
  Schedule s = scheduleAndCheck(nodes, 4);
  CHECK(s.events.empty());
  CHECK(s.makespan == Approx(3.0));
  std::set<int> used(s.stream.begin(), s.stream.end());
  CHECK(used.size() == 4);
}

TEST_CASE("a hybrid layer: lightning and softmax branches over shared "
          "input") {
  // norm -> {qkv_lin -> lightning(state) , qkv_soft -> rope_kv(cache) ->
  // attn(cache)} -> add; resources: 1 normed, 2/3 qkv, 10 state, 11 cache.
  std::vector<LaunchNode> nodes = {node("norm", 1, {rd(0), wr(1)}),
                                   node("qkv_lin", 3, {rd(1), wr(2)}),
                                   node("lightning", 5, {rd(2), rw(10), wr(4)}),
                                   node("qkv_soft", 3, {rd(1), wr(3)}),
                                   node("rope_kv", 1, {rw(3), rw(11)}),
                                   node("attn", 4, {rd(3), rd(11), wr(5)}),
                                   node("add", 1, {rd(4), rd(5), wr(6)})};
  Schedule s = scheduleAndCheck(nodes, 2);
  CHECK(s.stream[2] != s.stream[5]); // the two attentions overlap
  CHECK(s.makespan < 1 + 3 + 5 + 3 + 1 + 4 + 1);
}

TEST_CASE("random DAGs: every dependency is ordered, schedules are "
          "deterministic") {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 200; ++trial) {
    int n = std::uniform_int_distribution<int>(1, 60)(rng);
    int resources = std::uniform_int_distribution<int>(1, 20)(rng);
    std::vector<LaunchNode> nodes;
    for (int i = 0; i < n; ++i) {
      LaunchNode ln;
      ln.name = "n" + std::to_string(i);
      ln.cost = std::uniform_real_distribution<double>(0.1, 5.0)(rng);
      int uses = std::uniform_int_distribution<int>(1, 4)(rng);
      for (int u = 0; u < uses; ++u)
        ln.uses.push_back(
            {std::uniform_int_distribution<int>(0, resources - 1)(rng),
             static_cast<Access>(
                 std::uniform_int_distribution<int>(0, 2)(rng))});
      nodes.push_back(ln);
    }
    int streams = std::uniform_int_distribution<int>(1, 4)(rng);
    auto deps = findDependencies(nodes);
    ScheduleOptions options;
    options.maxStreams = streams;
    options.eventCost = trial % 2 ? 0.5 : 0.0;
    Schedule a = scheduleLaunches(nodes, deps, options);
    Schedule b = scheduleLaunches(nodes, deps, options);
    INFO("trial " << trial << ": " << checkSchedule(n, deps, a));
    REQUIRE(checkSchedule(n, deps, a).empty());
    CHECK(a.issueOrder == b.issueOrder);
    CHECK(a.stream == b.stream);
    CHECK(a.events == b.events);
    // No event is redundant: removing any one breaks some dependency.
    for (size_t e = 0; e < a.events.size(); ++e) {
      Schedule fewer = a;
      fewer.events.erase(fewer.events.begin() + e);
      CHECK_FALSE(checkSchedule(n, deps, fewer).empty());
    }
  }
}

TEST_CASE("the checker rejects a schedule that drops a needed event") {
  std::vector<LaunchNode> nodes = {node("a", 1, {wr(1)}), node("b", 1, {wr(2)}),
                                   node("c", 1, {rd(1), rd(2)})};
  auto deps = findDependencies(nodes);
  ScheduleOptions options;
  options.maxStreams = 2;
  Schedule s = scheduleLaunches(nodes, deps, options);
  REQUIRE(s.events.size() == 1);
  s.events.clear();
  CHECK_THAT(checkSchedule(3, deps, s),
             Catch::Matchers::Contains("read-after-write dependency"));
}
