// The one Catch2 main of all CPU unit tests (compiled once, linked by all).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
