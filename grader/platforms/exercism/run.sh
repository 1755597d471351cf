#!/usr/bin/env bash
# Exercism test-runner entry point (interface v3):
#   grader/platforms/exercism/run.sh <slug> <input_dir> <output_dir>
# Grades the solution in <input_dir> (read only: it is copied out, see locate-submission.mjs)
# and writes <output_dir>/results.json. Exits 0 whatever the verdict; only a broken call
# (missing arguments) exits 2. Writes nothing outside <output_dir> and the OS temp dir.
#
# Budget: Exercism gives a run 20 s of one CPU (100 %) and 3 GB. The grade's own deadline is
# LAB_DEADLINE_MS (default 16000), so a hanging submission still leaves time to write the
# result; docs/instructor-guide.md ("Deploy to a course") has the measured time on one CPU.
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 <slug> <input_dir> <output_dir>" >&2
  exit 2
fi
input=$2 output=${3%/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$output"
work=$(mktemp -d "${TMPDIR:-/tmp}/lab33-exercism-XXXXXX")
trap 'rm -rf "$work"' EXIT
bash "$here/../run-grade.sh" "$input" "$work" exercism "$output/results.json" --deadline-ms "${LAB_DEADLINE_MS:-16000}" > "$work/grade.log" 2>&1
exit 0
