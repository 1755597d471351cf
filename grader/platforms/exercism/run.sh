#!/usr/bin/env bash
# Exercism test-runner entry point (interface v3; the image also links it as the convention's
# /opt/test-runner/bin/run.sh):
#   run.sh <slug> <input_dir> <output_dir>
# Grades the solution in <input_dir>, which it only reads (the client is copied out, see
# locate-submission.mjs), and writes <output_dir>/results.json. Exits 0 whatever the verdict;
# only a broken call (missing arguments) exits 2. Writes nothing outside <output_dir> and the
# OS temp dir (Exercism mounts a tmpfs at /tmp).
#
# Budget: Exercism stops a run after 20 s (100 % of one CPU, 3 GB). Two limits keep the result
# inside it, with margin for Node's start-up before the grade and the render after it:
#   LAB_DEADLINE_MS  (default 12000) the grade's own deadline: a hanging or busy submission's
#                    unfinished checks are `error`, the rest keep their verdicts;
#   LAB_BUDGET_S     (default 17) a hard stop for the whole grade, process group included;
#                    when it fires, results.json says the run ran out of time (status error).
# docs/instructor-guide.md ("Deploy to a course") has the measured times on one CPU.
set -uo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 <slug> <input_dir> <output_dir>" >&2
  exit 2
fi
input=$2 output=${3%/}
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
budget=${LAB_BUDGET_S:-17}
mkdir -p "$output"
work=$(mktemp -d "${TMPDIR:-/tmp}/lab33-exercism-XXXXXX")
trap 'chmod -R u+w "$work" 2> /dev/null; rm -rf "$work"' EXIT
# timeout runs the grade in a process group of its own and signals the whole group.
timeout --kill-after=1 "$budget" bash "$here/../run-grade.sh" "$input" "$work" exercism "$output/results.json" --deadline-ms "${LAB_DEADLINE_MS:-12000}" > "$work/grade.log" 2>&1
status=$?
if [ "$status" = 124 ] || [ "$status" = 137 ] || [ ! -s "$output/results.json" ]; then
  # Out of time (or no result at all): a could-not-grade result in the interface's shape.
  node -e '
    const [file, status, budget, lang] = process.argv.slice(1);
    const late = status === "124" || status === "137";
    const message = lang === "en"
      ? (late ? `The grade did not finish within ${budget} s and was stopped. A loop that never yields, or a call that never settles, usually causes this: run npm run grade locally to see which test hangs.` : `The grader produced no result (exit status ${status}).`)
      : (late ? `评分没有在 ${budget} 秒内结束，已被终止。常见原因是永不让出的循环或永不 settle 的调用：在本地运行 npm run grade，看是哪个测试卡住。` : `评分器没有给出结果（退出码 ${status}）。`);
    require("fs").writeFileSync(file, JSON.stringify({ version: 3, status: "error", message, tests: [] }, null, 2) + "\n");
  ' "$output/results.json" "$status" "$budget" "${LAB_LANG:-zh}"
fi
exit 0
