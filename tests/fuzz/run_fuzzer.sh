#!/bin/sh
# Runs one libFuzzer target for a bounded time over its checked-in seed corpus (the `fuzz`
# suite of a -Dfuzzing=true build; docs/fuzzing.md). New inputs go to a scratch directory,
# so the checked-in corpus is never written; a crashing input is saved in the current
# directory as crash-<sha1> and fails the test.
# Usage: run_fuzzer.sh FUZZER SEED_DIR SECONDS
set -eu
fuzzer=$1 seeds=$2 seconds=$3
# Meson passes the fuzzer relative to the test's workdir, as a bare name: not a PATH lookup.
case $fuzzer in */*) ;; *) fuzzer=./$fuzzer ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$fuzzer" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 -artifact_prefix=./ \
  "$work" "$seeds"
