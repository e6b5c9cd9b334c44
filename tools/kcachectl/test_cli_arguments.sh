#!/bin/sh
# kcachectl's argument handling and exit codes (0 ok, 1 failure, 2 usage), without a daemon.
# Usage: test_cli_arguments.sh PATH/TO/kcachectl
set -u
ctl=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect CODE PATTERN ARGS...: runs kcachectl ARGS, checks the exit code and that stderr
# matches the grep pattern (empty: not checked).
expect() {
  code=$1 pattern=$2
  shift 2
  "$ctl" "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" -ne "$code" ]; then
    echo "FAIL: kcachectl $* exited $got, expected $code; stderr:"; cat "$tmp/err"
    failures=$((failures + 1))
  elif [ -n "$pattern" ] && ! grep -q -- "$pattern" "$tmp/err"; then
    echo "FAIL: kcachectl $*: stderr does not match '$pattern':"; cat "$tmp/err"
    failures=$((failures + 1))
  fi
}

expect 0 '' --help
expect 2 '^kcachectl: A subcommand is required'
expect 2 '^kcachectl: ' --no-such-option status
expect 2 '^kcachectl: ' frobnicate
expect 2 '^kcachectl: --name is required' get
expect 2 '^kcachectl: --target excludes --device' get --name k --target sm_90a --device 0
expect 2 "^kcachectl: --header expects NAME=FILE, got 'nonsense'" get --name k --header nonsense
expect 2 '^kcachectl: ' get --name k --option a b
# Option values may start with '-', and global options may follow the verb: parsing succeeds,
# then reading the missing source fails (exit 1) before any daemon is contacted.
expect 1 "^kcachectl: cannot read source '$tmp/missing.cu': No such file or directory" \
  get --name k --source "$tmp/missing.cu" --option -lineinfo --option=--use_fast_math --json
expect 1 "^kcachectl: cannot read header '$tmp/nope.h'" \
  get --name k --header "a.h=$tmp/nope.h" --socket "$tmp/none.sock"

[ "$failures" -eq 0 ] || exit 1
echo "all kcachectl argument checks passed"
