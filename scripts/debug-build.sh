#!/usr/bin/env bash
# The debug build `make test` makes, which `make docs`, the schemathesis run and the example's
# walkthrough reuse: `swift build` with the arguments given, plus the flags below. Every script
# that builds into .build in debug goes through here, as different flags make SwiftPM compile
# everything again.
#
# The build carries no debug information (-gnone): nobody attaches a debugger to a test run, and
# writing and linking the DWARF is a seventh of the build's CPU time (swift-syntax included). To
# debug a test, build with plain `swift build --build-tests` (SwiftPM then compiles everything again).
#
#   scripts/debug-build.sh --build-tests
#   scripts/debug-build.sh --product syncd
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift build -Xswiftc -gnone "$@"
