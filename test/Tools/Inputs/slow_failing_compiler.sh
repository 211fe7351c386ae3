#!/bin/sh
# A compiler that logs when it runs, takes a moment and fails: for
# stage-build-failure.test. $STAGE_BUILD_LOG collects "start T" and
# "end T" lines (T in nanoseconds).
echo "start $(date +%s%N)" >> "$STAGE_BUILD_LOG"
sleep 0.3
echo "end $(date +%s%N)" >> "$STAGE_BUILD_LOG"
echo "fake compiler: cannot build $*" >&2
exit 1
