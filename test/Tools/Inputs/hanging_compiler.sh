#!/bin/sh
# A compiler that never finishes by itself: for compile-interrupt.test. It
# logs "start" to $STAGE_BUILD_LOG, and "end" only if its wait ever ends;
# SIGTERM ends it and its sleep.
echo start >> "$STAGE_BUILD_LOG"
trap 'kill $child; exit 143' TERM
sleep 600 &
child=$!
wait $child
echo end >> "$STAGE_BUILD_LOG"
