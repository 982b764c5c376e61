// Default run-time options of the sanitizer build, compiled into each of its
// executables (cmake/StrataSanitizers.cmake). ASAN_OPTIONS and UBSAN_OPTIONS
// given in the environment still override them.
//
// A sanitizer report must never look like a clean error exit: by default it
// exits with code 1, the code tools here use for bad input, so a lit test
// that expects a rejection (`not`, `%expect-exit 1`) would pass over a
// heap overflow. Aborting instead makes every report a crash. Leak reports
// abort too.

extern "C" {

// Called by the sanitizer runtimes before main; the names are theirs.
const char *__asan_default_options() { return "abort_on_error=1"; }

const char *__ubsan_default_options() {
  return "abort_on_error=1:print_stacktrace=1";
}

} // extern "C"
