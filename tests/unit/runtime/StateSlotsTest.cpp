// Linear-attention state slots: lowest free id first, padding never valid.
#include "runtime/StateSlots.h"

#include <catch2/catch.hpp>

using strata::StateSlots;

TEST_CASE("slots are handed out lowest first and reused after release") {
  StateSlots slots(3);
  int32_t a = -2, b = -2, c = -2, d = -2;
  std::string error;
  REQUIRE(slots.allocate(a, error));
  REQUIRE(slots.allocate(b, error));
  REQUIRE(slots.allocate(c, error));
  CHECK((a == 0 && b == 1 && c == 2));
  CHECK_FALSE(slots.allocate(d, error));
  CHECK(error == "linear-attention state slots exhausted: all 3 are in use");
  REQUIRE(slots.release(1));
  REQUIRE(slots.release(0));
  REQUIRE(slots.allocate(d, error));
  CHECK(d == 0);
  CHECK(slots.freeSlots() == 1);
}

TEST_CASE("the padding slot and unknown ids cannot be released") {
  StateSlots slots(2);
  CHECK_FALSE(slots.release(strata::kPaddingSlot));
  CHECK_FALSE(slots.release(5));
  CHECK_FALSE(slots.release(0)); // never allocated
  CHECK_FALSE(slots.inUse(strata::kPaddingSlot));
}
