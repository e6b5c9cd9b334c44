#!/usr/bin/env python3
"""test-summary.py — what one `meson test` run covered, from its meson-logs/testlog.json.

Prints which compilers the test programs found and used (their "[ backend  ]" and
"PROGRAM: compile backend:" lines), how many programs passed, skipped (exit 77, with the reason they printed last) or
failed, and every GoogleTest case that skipped with its GTEST_SKIP() message, so that a reader
of a green run knows what it did not test. tools/check.sh runs it after each pass.

  test-summary.py BUILDDIR LABEL        print the summary of the last run in BUILDDIR
  test-summary.py --nvrtc-found BUILDDIR  exit 0 if that run's programs found NVRTC, else 1
"""
import json
import re
import sys
from pathlib import Path

BACKEND_LINE = re.compile(r"^\[ backend  \] (.*)$")
PROGRAM_BACKEND = re.compile(r"^[\w.-]+: compile backend: (.*)$")
RUN = re.compile(r"^\[ RUN      \] (\S+)")
SKIPPED = re.compile(r"^\[  SKIPPED \] (\S+) \(")


def load_runs(builddir):
    log = Path(builddir) / "meson-logs" / "testlog.json"
    try:
        return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    except OSError as e:
        sys.exit(f"test-summary: cannot read {log}: {e.strerror}")


def gtest_skips(stdout):
    """(case, reason) for every case that skipped; the reason is GTEST_SKIP()'s message."""
    skips, current, reason, in_skip = [], None, [], False
    for line in stdout.splitlines():
        if m := RUN.match(line):
            current, reason, in_skip = m.group(1), [], False
        elif m := SKIPPED.match(line):
            if m.group(1) == current:
                skips.append((current, " ".join(reason).strip() or "(no reason given)"))
            current, in_skip = None, False
        elif current is not None and line.endswith(": Skipped"):
            in_skip = True
        elif in_skip:
            reason.append(line.strip())
    return skips


def compiler_facts(runs):
    """(what was found, {backend used: [programs]}) from the lines the programs printed."""
    found, used = {}, {}
    for run in runs:
        program = run["name"].split(" / ")[-1]
        for line in run.get("stdout", "").splitlines():
            if m := BACKEND_LINE.match(line):
                fact = m.group(1)
                if fact.startswith("compile backend: "):
                    used.setdefault(fact.removeprefix("compile backend: "), []).append(program)
                else:
                    found.setdefault(fact, None)
            elif m := PROGRAM_BACKEND.match(line):
                used.setdefault(next(g for g in m.groups() if g), []).append(program)
    return list(found), used


def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "(printed nothing)"


def summarize(builddir, label):
    runs = load_runs(builddir)
    by_result = {}
    for run in runs:
        by_result.setdefault(run["result"], []).append(run)
    print(f"== test summary: {label} ==")
    found, used = compiler_facts(runs)
    print("compilers: " + ("; ".join(found) if found else "(no program said)"))
    print("compile backend used:")
    for backend, programs in used.items():
        print(f"  {backend}: {', '.join(programs)}")
    counts = ", ".join(f"{len(v)} {k.lower()}" for k, v in sorted(by_result.items()))
    print(f"programs: {len(runs)} run: {counts}")
    for run in by_result.get("SKIP", []):
        print(f"  skipped {run['name']}: {last_line(run.get('stdout', ''))}")
    for result in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"):
        for run in by_result.get(result, []):
            print(f"  {result.lower()} {run['name']}")
    cases = [(run["name"], c, why) for run in runs for c, why in gtest_skips(run.get("stdout", ""))]
    print(f"test cases skipped: {len(cases)}")
    for program, case, why in cases:
        print(f"  {case} ({program.split(' / ')[-1]}): {why}")


def nvrtc_found(builddir):
    found, _ = compiler_facts(load_runs(builddir))
    return any(f.startswith("NVRTC: available") for f in found)


def main(argv):
    if len(argv) == 3 and argv[1] == "--nvrtc-found":
        return 0 if nvrtc_found(argv[2]) else 1
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    summarize(argv[1], argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
