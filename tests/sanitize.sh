#!/usr/bin/env bash
# The C++ suite under AddressSanitizer and UndefinedBehaviorSanitizer (a developer's
# check, not CI's: the build alone takes about 15 minutes on 2 cores). It finds what
# an optimised build hides until the optimiser changes: e.g. an observer lambda that
# read a flag declared in a block that had ended before sim.run() (found when an LTO
# build crashed; ASan named it, stack-use-after-scope).
#   tests/sanitize.sh               build/asan, then every test
#   tests/sanitize.sh -R Golden     extra arguments go to ctest
# The tasks run on boost.context fibers that the system's Boost does not announce to
# ASan, so its fake stacks (detect_stack_use_after_return) are off: they would report
# the fiber switches themselves. SimGrid's own switch to the actor that hosts the
# fibers is not announced either: ASan warns once that it ignores a
# __asan_handle_no_return there ("stack type: default"), which is that, not a finding.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$flags" \
  -DSEMSIM_BUILD_PYTHON=OFF -DSEMSIM_BUILD_TESTS=ON >/dev/null
ninja -C build/asan semsim_tests semsim_native_alone
# handle_segv=0: the run pool's tests crash workers on purpose (SIGSEGV) and expect the signal.
export ASAN_OPTIONS=detect_stack_use_after_return=0:detect_leaks=1:handle_segv=0
export UBSAN_OPTIONS=print_stacktrace=1
# A deep recursion that fits the fibers' 256 KiB in a plain build does not with redzones.
ctest --test-dir build/asan --output-on-failure --no-tests=error -j "$(nproc)" \
  -E ATaskHasTheStackRoomItHadUnderSimGrid "$@"
