#!/usr/bin/env bash
# tools/lint-sizes.sh BUILDDIR — the size limits of docs/architecture.md ("How we want the
# code"): no source file over 500 lines, no function over 80 lines (clang-tidy's
# readability-function-size, which counts a function's body lines), over daemon/, libclient/
# and tools/. Prints every offender and fails when there is one. Needs BUILDDIR's
# compile_commands.json (Meson writes it).
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${1:?usage: tools/lint-sizes.sh BUILDDIR}
dirs=(daemon libclient tools)
status=0

while IFS= read -r -d '' file; do
  lines=$(wc -l <"$file")
  if [ "$lines" -gt 500 ]; then
    echo "$file: $lines lines (the limit is 500)"
    status=1
  fi
done < <(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' \) -print0)

# One check only, so the run costs what parsing costs. Headers under the same folders are
# checked through the files that include them.
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [ -z "$tidy" ]; then
  echo "lint-sizes: clang-tidy not found (tools/install-deps.sh installs clang-tidy-14)" >&2
  exit 1
fi
mapfile -t sources < <(python3 - "$builddir" <<'PY'
import json, os, sys
root = os.getcwd()
seen = set()
for entry in json.load(open(os.path.join(sys.argv[1], 'compile_commands.json'))):
    path = os.path.normpath(os.path.join(entry['directory'], entry['file']))
    rel = os.path.relpath(path, root)
    if rel.split(os.sep)[0] in ('daemon', 'libclient', 'tools') and rel not in seen:
        seen.add(rel)
        print(rel)
PY
)
config='{Checks: "-*,readability-function-size", WarningsAsErrors: "*",
         CheckOptions: [{key: readability-function-size.LineThreshold, value: 80}]}'
out=$(mktemp)
trap 'rm -f "$out"' EXIT
printf '%s\n' "${sources[@]}" |
  xargs -P "$(nproc)" -n 8 "$tidy" -p "$builddir" --quiet --config="$config" \
    --header-filter='/(daemon|libclient|tools)/' >"$out" 2>/dev/null || true
if grep -q 'readability-function-size' "$out"; then
  grep -A1 'readability-function-size' "$out" | grep -v '^--$' | sort -u
  status=1
fi
if [ "$status" -eq 0 ]; then
  echo "lint-sizes: ${#sources[@]} sources checked; no file over 500 lines, no function over 80"
fi
exit $status
