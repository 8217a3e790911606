// main() of the kernel and backend test binaries, which run once more for each kernel
// level (tests/CMakeLists.txt, SEER_KERNEL_LEVEL; kernels/kernel_level.h). Under a
// level this binary or CPU cannot run, or the machine's best level (the unprefixed
// run took it), each test runs KernelLevel.IsTheOneAsked instead, which skips with the
// reason: so the summary lists every level that was not run, and why, and no test
// passes at a level it did not run at. (GTEST_SKIP in a global environment marks the
// tests passed, not skipped.)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/kernel_level.h"

namespace seer::testing {
namespace {

const char* asked_level() {
  const char* v = std::getenv("SEER_KERNEL_LEVEL");
  return v && *v ? v : nullptr;
}

QIsa best_available_level() {
  QIsa best = QIsa::Scalar;
  for (QIsa isa : kAllQIsas)
    if (kernel_level_available(isa)) best = isa;
  return best;
}

// Why the asked level's run is not made here; empty when it is (or none was asked).
std::string not_run_reason() {
  const char* v = asked_level();
  if (!v) return {};
  const QIsa level = kernel_level_cap();
  if (!kernel_level_available(level))
    return std::string("kernel level ") + v + " not run: " + kernel_level_unavailable_reason(level);
  if (level == best_available_level())
    return std::string("kernel level ") + v + " is this machine's best: the unprefixed run covered it";
  return {};
}

TEST(KernelLevel, IsTheOneAsked) {
  std::printf("cpu: %s\n", cpu_summary_line().c_str());
  if (const std::string why = not_run_reason(); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(active_kernel_level(), asked_level() ? kernel_level_cap() : best_available_level())
      << cpu_summary_line();
}

}  // namespace
}  // namespace seer::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!seer::testing::not_run_reason().empty()) GTEST_FLAG_SET(filter, "KernelLevel.IsTheOneAsked");
  return RUN_ALL_TESTS();
}
