#!/usr/bin/env bash
# Gradescope build check, run by setup.sh at the end of the image build: grades the starter
# through the same path as a student's upload (run-grade.sh, as LAB_GRADE_USER) and exits 1,
# with the grade's log, unless the result is the starter's pinned verdict: `fail`, with the
# happy path passing. A missing result, `error` or a pass all mean this image cannot grade
# (no Node, packages unreadable by the grading user, a broken sandbox…), and the instructor
# sees why in Gradescope's build output instead of in the first student's results.
#   LAB_SOURCE=DIR                the unpacked zip (default /autograder/source)
#   LAB_GRADE_USER=NAME           the grading user (default lab33; empty = the current user)
#   LAB_BUILD_CHECK_SUBMISSION=D  grade D instead of the starter (the check's own test)
set -uo pipefail
source_dir=${LAB_SOURCE:-/autograder/source}
user=${LAB_GRADE_USER-lab33}
submission=${LAB_BUILD_CHECK_SUBMISSION:-$source_dir/labs/33-mcp-lite/starter}
check=$(mktemp -d)
chmod 755 "$check"
trap 'rm -rf "$check"' EXIT
LAB_GRADE_USER=$user bash "$source_dir/grader/platforms/run-grade.sh" "$submission" "$check/work" json "$check/result.json" > "$check/log" 2>&1
if ! node -e '
  let r = {};
  try { r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); } catch (error) { r = { status: "missing", message: String(error) }; }
  const happy = (r.checks || []).find((c) => c.id === "evidence/happy-path");
  if (r.status !== "fail" || !happy || happy.status !== "pass") {
    console.error(`build check failed: the starter graded ${r.status} (happy path: ${happy ? happy.status : "missing"}); expected fail with the happy path passing. ${r.message || ""}`);
    process.exit(1);
  }
  console.log(`build check: the starter graded ${r.status} ${r.score}/${r.maxScore} in ${r.durationMs} ms, as expected`);
' "$check/result.json"; then
  echo "--- grade log ---" >&2
  cat "$check/log" >&2
  exit 1
fi
