// The native runner's latency sampler (native/task_loop.hpp): which calls it times.
// It must time exactly the calls a modulo rule names -- call i of the window when
// i % stride == 0, the stride starting at kSamplePeriod and doubling each time the
// buffer fills, keeping every other sample -- without dividing on the loop's path.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "native/task_loop.hpp"

namespace semsim::native::detail {
namespace {

// The rule as a division, and the samples it keeps (the value stored is the index).
struct ModuloRule {
  std::vector<std::uint64_t> kept;
  std::uint64_t stride = kSamplePeriod;
  bool want(std::uint64_t i) const { return i % stride == 0; }
  void add(std::uint64_t i) {
    if (kept.size() == kSampleCapacity) {
      std::vector<std::uint64_t> half;
      for (std::size_t k = 0; k < kept.size(); k += 2) half.push_back(kept[k]);
      kept = half;
      stride *= 2;
      if (i % stride != 0) return;
    }
    kept.push_back(i);
  }
};

TEST(NativeSampler, TimesTheCallsTheModuloRuleNamesThroughSeveralDoublings) {
  std::vector<std::uint64_t> buf(kSampleCapacity);
  Sampler s(buf.data());
  s.restart();
  ModuloRule rule;
  const std::uint64_t calls = 20 * kSamplePeriod * kSampleCapacity;  // 4 doublings and more
  for (std::uint64_t i = 0; i < calls; ++i) {
    ASSERT_EQ(s.want(i), rule.want(i)) << "call " << i;
    if (rule.want(i)) {
      s.add(i, static_cast<std::int64_t>(i));
      rule.add(i);
    }
  }
  ASSERT_EQ(s.count(), rule.kept.size());
  EXPECT_EQ(s.stride(), rule.stride);
  EXPECT_GT(s.stride(), kSamplePeriod * 8);
  for (std::size_t k = 0; k < rule.kept.size(); ++k) EXPECT_EQ(buf[k], rule.kept[k]) << k;
}

// A wanted call that failed is not timed, and the next one is a stride on.
TEST(NativeSampler, ASkippedCallMovesTheNextSampleOn) {
  std::vector<std::uint64_t> buf(kSampleCapacity);
  Sampler s(buf.data());
  s.restart();
  ASSERT_TRUE(s.want(0));
  s.skip(0);
  EXPECT_FALSE(s.want(1));
  EXPECT_TRUE(s.want(kSamplePeriod));
  EXPECT_EQ(s.count(), 0U);
}

TEST(NativeSampler, WithoutABufferNothingIsTimed) {
  Sampler s(nullptr);
  s.restart();
  EXPECT_FALSE(s.want(0));
}

}  // namespace
}  // namespace semsim::native::detail
