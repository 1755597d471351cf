#!/usr/bin/env bash
# PrairieLearn external-grader entry point (externalGradingOptions.entrypoint). Grades the
# files PrairieLearn put in /grade/student and writes /grade/results/results.json:
# score 0..1, gradable false when the submission could not be graded (it does not load or
# compile; the student keeps the attempt), one test per check with points and max_points.
# The student's code runs as LAB_GRADE_USER (default lab33, created in the image by the
# Dockerfile beside this file) when this runs as root. LAB_PL_ROOT (default /grade) exists
# for the test that runs this script on a fake /grade tree.
set -uo pipefail
root=${LAB_PL_ROOT:-/grade}
export LAB_GRADE_USER=${LAB_GRADE_USER-lab33}
if [ -n "$LAB_GRADE_USER" ] && ! id -u "$LAB_GRADE_USER" > /dev/null 2>&1; then LAB_GRADE_USER=; fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/lab33-prairielearn-XXXXXX")
chmod 755 "$work"
trap 'chmod -R u+w "$work" 2> /dev/null; rm -rf "$work"' EXIT
mkdir -p "$root/results"
bash "$here/../run-grade.sh" "$root/student" "$work" prairielearn "$root/results/results.json" --deadline-ms "${LAB_DEADLINE_MS:-60000}"
echo "grade exit status: $? (0 pass, 1 fail, 2 could not grade)"
exit 0
