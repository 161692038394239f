// The in-context smp_mb() probes (calibrate/probes.hpp): lock xadd then four
// dependent loads, with mfence, lock addl or nothing between. Runs them quickly on
// this host; a VM's numbers are noisy, so only what holds everywhere is asserted:
// each takes time and a fence between the RMW and the loads never makes them faster
// by more than the noise.
#include <gtest/gtest.h>

#include <cstdio>

#include "calibrate/probes.hpp"

namespace semsim::calibrate {
namespace {

TEST(CalibrateFenceProbe, AFenceAfterALockedRmwCostsInContext) {
  probes::Settings s;
  s.quick = true;
  s.repeats = 3;
  const probes::Stat none = probes::rmw_loads(s);
  const probes::Stat mfence = probes::rmw_mfence_loads(s);
  const probes::Stat lockadd = probes::rmw_lockadd_loads(s);
  std::printf("lock xadd + 4 loads: %.2f ns; + mfence: %.2f ns; + lock addl: %.2f ns\n",
              none.median, mfence.median, lockadd.median);
  for (const auto* st : {&none, &mfence, &lockadd}) {
    EXPECT_EQ(st->repeats, 3);
    EXPECT_GT(st->median, 0.1);  // a locked RMW and four loads take more than 0.1 ns
    EXPECT_LT(st->median, 1000);
  }
  // An mfence cannot overlap the locked RMW before it: it costs at least a little.
  EXPECT_GT(mfence.median, none.median * 1.05)
      << "mfence " << mfence.median << " ns, none " << none.median << " ns";
  EXPECT_GT(lockadd.median, none.median * 0.9);
}

}  // namespace
}  // namespace semsim::calibrate
