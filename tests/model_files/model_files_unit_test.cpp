// tests/model_files/model_files_unit_test.cpp — the pieces of host/model_files in process: which structs
// of a header are models, how one is chosen, the cache's key hash and its build-once entries, and the
// child-process runner.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "host/model_files/engine_cache.hpp"
#include "host/model_files/header_models.hpp"
#include "host/model_files/model_compiler.hpp"
#include "host/model_files/subprocess.hpp"

namespace lockstep::model_files {
namespace {

namespace fs = std::filesystem;

// The members of a model, after its name (without the struct's braces).
constexpr const char* model_body = R"(
  static constexpr int n = 1, m = 0, k = 0;
  template <class T, class P> static int mass(T, P) { return 0; }
  template <class T, class P> static int force(T, P) { return 0; }
  template <class T, class P> static int constraint(T, P) { return 0; }
  static void initial_state() {}
})";

TEST(HeaderModels, FindsModelsAtNamespaceScopeWithTheirNames) {
  const std::string text = std::string(R"(// struct commented_out { mass force constraint initial_state };
#include "lockstep/model/concept.hpp"
/* struct also_commented { mass; force; constraint; initial_state; }; */
namespace outer::inner {
struct crane {
  static constexpr const char* name = "tower_crane";)") + model_body + R"(;
template <int N> struct chain_like {
  static constexpr const char* name = "chain";)" + model_body + R"(;
struct helper { double mass; };
struct outer_model {
  struct nested { int mass, force, constraint, initial_state; };
  static constexpr const char* name = "outer";)" + model_body + R"(;
}
namespace {
struct hidden_model {)" + model_body + R"(;
}
struct global_model : public base<int> {
  static constexpr auto name = R"x(raw name)x";)" + model_body + ";\n";
  const std::vector<header_model> found = find_header_models(text);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].type, "outer::inner::crane");
  EXPECT_EQ(found[0].name, "tower_crane");
  EXPECT_EQ(found[0].line, 5);
  EXPECT_EQ(found[1].type, "outer::inner::outer_model");
  EXPECT_EQ(found[1].name, "outer");
  EXPECT_EQ(found[2].type, "hidden_model");  // an anonymous namespace adds nothing to the name
  EXPECT_EQ(found[2].name, "");
  EXPECT_EQ(found[3].type, "global_model");
  EXPECT_EQ(found[3].name, "raw name");
}

TEST(HeaderModels, MemberPositionIsWhereTheStructDeclaresItNotWhereAFunctionUsesIt) {
  // Arrange: force calls constraint before constraint is declared; a second struct declares its own.
  const std::string text = R"(#include "lockstep/model/concept.hpp"
namespace a {
  struct crane {
  static constexpr int n = 1, m = 1, k = 0;
  template <class T, class P> static int force(T t, P p) { return constraint(t, p); }
  template <class T, class P> static int mass(T, P) { return 0; }
  template <class T, class P>
  static int   constraint(T, P) { return 0; }
  static void initial_state() {}
};
}
struct other { template <class T, class P> static int mass(T, P) { return 0; } int constraint, force, initial_state; };
)";
  const std::vector<header_model> found = find_header_models(text);
  ASSERT_EQ(found.size(), 2u);

  // Act
  const header_position constraint = member_position(text, found[0], "constraint");
  const header_position mass = member_position(text, found[0], "mass");
  const header_position absent = member_position(text, found[0], "nonholonomic");
  const header_position others = member_position(text, found[1], "constraint");

  // Assert: line and column of the declaration; the struct keyword when there is none.
  EXPECT_EQ(std::make_pair(constraint.line, constraint.column), std::make_pair(8, 16));
  EXPECT_EQ(std::make_pair(mass.line, mass.column), std::make_pair(6, 42));
  EXPECT_EQ(std::make_pair(absent.line, absent.column), std::make_pair(3, 3));
  EXPECT_EQ(std::make_pair(others.line, others.column), std::make_pair(12, 84));
}

TEST(HeaderModels, ChoosesTheOnlyOneOrTheNamedOne) {
  const std::vector<header_model> one = {{"a::crane", "tower_crane", 3}};
  EXPECT_EQ(choose_header_model(one, "", "crane.hpp").type, "a::crane");
  const std::vector<header_model> two = {{"a::crane", "tower_crane", 3}, {"a::arm", "robot_arm", 30}};
  EXPECT_EQ(choose_header_model(two, "robot_arm", "m.hpp").type, "a::arm");  // by its name
  EXPECT_EQ(choose_header_model(two, "crane", "m.hpp").type, "a::crane");    // by its type
  EXPECT_EQ(choose_header_model(two, "a::arm", "m.hpp").type, "a::arm");     // by its qualified type
  try {
    choose_header_model(two, "", "m.hpp");
    FAIL() << "two models and no name must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"tower_crane\" (a::crane), \"robot_arm\" (a::arm)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(choose_header_model(two, "gantry", "m.hpp"), std::invalid_argument);
  EXPECT_THROW(choose_header_model({}, "", "empty.hpp"), std::invalid_argument);
}

TEST(EngineCache, Sha256OfKnownMessages) {
  // FIPS 180-2, appendix B.1 and B.2.
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(EngineCache, ConcurrentCallersBuildAnEntryOnce) {
  const fs::path dir = fs::temp_directory_path() / ("lockstep-cache-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::atomic<int> builds{0};
  std::vector<std::thread> threads;
  std::atomic<int> built_here{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      const bool built = make_entry(dir, "key", [&](const fs::path& build) {
        ++builds;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        write_file_atomically(build / "engine.so", "library");
      });
      if (built) ++built_here;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(builds.load(), 1);
  EXPECT_EQ(built_here.load(), 1);
  EXPECT_EQ(read_file(dir / "key" / "engine.so"), "library");
  fs::remove_all(dir);
}

TEST(EngineCache, AFailedBuildLeavesNothing) {
  const fs::path dir = fs::temp_directory_path() / ("lockstep-cache-fail-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  EXPECT_THROW(make_entry(dir, "key",
                          [](const fs::path& build) {
                            write_file_atomically(build / "engine.so", "half");
                            throw std::runtime_error("compiler failed");
                          }),
               std::runtime_error);
  for (const auto& entry : fs::directory_iterator(dir)) EXPECT_EQ(entry.path().filename(), "key.lock");
  EXPECT_FALSE(fs::exists(dir / "key"));
  fs::remove_all(dir);
}

TEST(EngineCache, AFailedBuildIsKeptWhereAskedInPlaceOfTheLastOne) {
  // Arrange: a failure already kept there.
  const fs::path dir = fs::temp_directory_path() / ("lockstep-cache-keep-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path kept = dir / "failed" / "model";
  fs::create_directories(kept);
  write_file_atomically(kept / "older.txt", "the last failure");

  // Act
  EXPECT_THROW(make_entry(dir / "engines", "key",
                          [](const fs::path& build) {
                            write_file_atomically(build / "engine.cpp", "the unit");
                            throw std::runtime_error("compiler failed");
                          },
                          kept),
               std::runtime_error);

  // Assert: no entry, and the build's folder in place of the older one.
  EXPECT_FALSE(fs::exists(dir / "engines" / "key"));
  for (const auto& entry : fs::directory_iterator(dir / "engines")) EXPECT_EQ(entry.path().filename(), "key.lock");
  EXPECT_EQ(read_file(kept / "engine.cpp"), "the unit");
  EXPECT_FALSE(fs::exists(kept / "older.txt"));
  fs::remove_all(dir);
}

// nvcc's message for a model header whose functions are not LOCKSTEP_HD (as nvcc 13.0 wrote it for
// such a header), and another of its messages, which gets no hint.
TEST(DeviceCompile, AHostOnlyModelFunctionGetsTheHintToMarkItLockstepHd) {
  const std::string host_only =
      "include/lockstep/model/derivatives.hpp(607): error: calling a __host__ function(\"lockstep::vec<T1, (int)1> "
      "examples::heavy_top::constraint<double, double> (const T1 &, const lockstep::vec<T1, (int)4> &, const T2 *)\") "
      "from a __host__ __device__ function(\"lockstep::acceleration_constraint_rows<examples::heavy_top, double, "
      "double>\") is not allowed\n";
  const std::string hint = lockstep::model_files::device_compile_hint(host_only);
  EXPECT_NE(hint.find("LOCKSTEP_HD"), std::string::npos) << hint;
  EXPECT_NE(hint.find("lockstep/core/hd.hpp"), std::string::npos) << hint;
  EXPECT_EQ(lockstep::model_files::device_compile_hint("engine.cu(12): error: identifier \"q\" is undefined\n"), "");
}

TEST(Subprocess, CapturesOutputErrorsInputAndExitCode) {
  const process_result r = run_process({"/bin/sh", "-c", "cat; echo to-stderr >&2; exit 3"}, "from stdin\n");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "from stdin\n");
  EXPECT_EQ(r.errors, "to-stderr\n");
  // More than a pipe holds, on both streams at once: no deadlock.
  const process_result big = run_process({"/bin/sh", "-c", "head -c 300000 /dev/zero; head -c 300000 /dev/zero >&2"});
  EXPECT_EQ(big.output.size(), 300000u);
  EXPECT_EQ(big.errors.size(), 300000u);
  EXPECT_THROW(run_process({"/no/such/program"}), std::runtime_error);
}

TEST(Subprocess, ChildrenThatCloseTheirInputOnSeveralThreadsLeaveSigpipeAsItWas) {
  // Arrange: SIGPIPE's default action kills the process; children that exit without reading a
  // megabyte of input, on four threads at once (as the parts of an engine compile).
  struct sigaction default_action {}, before {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ASSERT_EQ(sigaction(SIGPIPE, &default_action, &before), 0);
  const std::string input(1 << 20, 'x');
  std::atomic<int> exited_zero{0};

  // Act
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int call = 0; call < 8; ++call)
        if (run_process({"/bin/sh", "-c", "exit 0"}, input).exit_code == 0) ++exited_zero;
    });
  for (std::thread& t : threads) t.join();

  // Assert: this process lives (the signal never reached it), SIGPIPE's action is the default still,
  // and no SIGPIPE is left pending for this thread or the process.
  struct sigaction after {};
  ASSERT_EQ(sigaction(SIGPIPE, &before, &after), 0);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
  sigset_t pending;
  ASSERT_EQ(sigpending(&pending), 0);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
  EXPECT_EQ(exited_zero.load(), 32);
}

}  // namespace
}  // namespace lockstep::model_files
