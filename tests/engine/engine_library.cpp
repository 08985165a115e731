// tests/engine/engine_library.cpp — an engine library built as a user's model would be: the test model's
// engine table behind the C entry point, compiled by the rules of docs/ENGINE-ABI.md (lockstep's flags,
// hidden visibility, no OpenMP) into its own shared library.
//
// LOCKSTEP_TEST_ENGINE_VARIANT selects what the library exports: 0 the real engine, 1 a table of
// another ABI version, 2 no entry point at all (the loader must refuse 1 and 2 with a reason).
#include "lockstep/core/elementary_definitions.hpp"  // the library's own elementary functions (rule 5)
#include "lockstep/engine/model_engine.hpp"
#include "tests/engine/cart_pendulum.hpp"

#if LOCKSTEP_TEST_ENGINE_VARIANT == 0
extern "C" __attribute__((visibility("default"))) const lockstep_engine* LOCKSTEP_ENGINE_ENTRY() {
  return lockstep::model_engine<lockstep::tests::cart_pendulum>();
}
#elif LOCKSTEP_TEST_ENGINE_VARIANT == 1
extern "C" __attribute__((visibility("default"))) const lockstep_engine* LOCKSTEP_ENGINE_ENTRY() {
  static lockstep_engine table{};
  table.header = {LOCKSTEP_ENGINE_ABI_VERSION + 1, static_cast<std::uint32_t>(sizeof table), LOCKSTEP_BUILD_ID};
  table.name = "from_the_future";
  return &table;
}
#else
extern "C" __attribute__((visibility("default"))) int not_an_engine() { return 0; }
#endif
