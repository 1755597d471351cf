#!/usr/bin/env bash
# Shared by the platform entry points (Gradescope, PrairieLearn, Exercism): grades one upload
# with the grader CLI and renders the result in one platform format.
#   run-grade.sh UPLOAD_DIR WORK_DIR FORMAT OUT_FILE [grader flags...]
# 1. locate-submission.mjs copies the client out of the upload into WORK_DIR/submission;
# 2. the grader runs, as LAB_GRADE_USER when that is set and this script runs as root (the
#    student's code then never runs as root), with the sandbox on where the grader has one,
#    and writes its native result into WORK_DIR/out;
# 3. this (trusted) side re-renders that result with --from into OUT_FILE. When the grader
#    left no readable result, a could-not-grade result says so instead.
# Temp dirs: the trusted steps (locate, validate, render; root when the grade runs as
# LAB_GRADE_USER) get WORK_DIR/tmp-trusted (mode 700, owner = this script's user) and tsx's
# compile cache off (tsx runs where the grade's bundle cannot), the graded side gets
# WORK_DIR/tmp-graded (mode 700, owned by the grading user). Nothing either side runs reads a
# path the other side can write: tsx keys its cache in $TMPDIR/tsx-<uid> by content hash
# without checking who made it, so a shared /tmp would let the graded side plant compiled code
# that root then runs; the grade's bundle (node_modules/.cache/lab-grader) is run only while
# its owner is the running user or root and no one else may write it.
# Writes only under WORK_DIR and OUT_FILE (the grader loads its vitest config with Vite's
# `runner` loader, which writes no bundled copy into node_modules). Returns the grader's exit status (0 pass, 1 fail, 2 could not grade).
set -uo pipefail
upload=$1 work=$2 format=$3 out_file=$4
shift 4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
# The grade command's launcher (grader/cli.mjs): the prebuilt bundle that npm ci made, which it
# runs only while no one but its owner or root can have written it (cli-bundle.mjs ownedSafely),
# else grader/cli.ts through tsx.
grade=("$(command -v node)" "$source_dir/grader/cli.mjs")
user=${LAB_GRADE_USER:-}

mkdir -p "$work/out" "$work/home"
rm -rf "$work/tmp-trusted" "$work/tmp-graded"
mkdir -m 700 "$work/tmp-trusted" "$work/tmp-graded"
# Every trusted step below inherits these; the graded side gets its own TMPDIR explicitly.
export TMPDIR="$work/tmp-trusted" TSX_DISABLE_CACHE=1
rm -f "$out_file"
node "$here/locate-submission.mjs" "$upload" "$work/submission"
# The copy keeps the upload's modes; a read-only upload (Exercism mounts it so) must not make
# the copy undeletable for whoever cleans WORK_DIR up.
chmod -R u+w "$work/submission" 2> /dev/null

flags=(--submission "$work/submission" --json "$work/out/native.json" --format text --lang "${LAB_LANG:-zh}")
# The sandbox of the grader (grader/sandbox) where this version of the grader has one.
if grep -q -- '--sandbox' "$source_dir/grader/cli-main.ts" 2>/dev/null; then flags+=(--sandbox "${LAB_SANDBOX:-auto}"); fi
# A longer hang deadline for slow or shared machines (the grader's default is 2000 ms).
if [ -n "${LAB_HANG_MS:-}" ]; then flags+=(--hang-ms "$LAB_HANG_MS"); fi

as_grader=(env -i "PATH=$PATH" "HOME=$work/home" "TMPDIR=$work/tmp-graded" "LAB_LANG=${LAB_LANG:-zh}")
rendered=no
if [ -n "$user" ] && [ "$(id -u)" = 0 ]; then
  chown -R "$user" "$work/out" "$work/home" "$work/submission" "$work/tmp-graded"
  as_grader=(runuser -u "$user" -- "${as_grader[@]}")
else
  # Same user: the grader renders the platform format itself (one process start fewer).
  mkdir -p "$(dirname "$out_file")"
  flags=(--submission "$work/submission" --json "$work/out/native.json" --format "$format" --out "$out_file" --lang "${LAB_LANG:-zh}" "${flags[@]:8}")
  rendered=yes
fi
(cd "$source_dir" && "${as_grader[@]}" "${grade[@]}" "${flags[@]}" "$@")
status=$?

native="$work/out/native.json"
if ! node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); if (typeof r !== "object" || !r || !["pass","fail","error"].includes(r.status) || !Array.isArray(r.checks)) process.exit(1)' "$native" 2>/dev/null; then
  native="$work/fallback.json"
  node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({ version: 1, lab: "33-mcp-lite", status: "error", score: 0, maxScore: 0, bonus: { score: 0, maxScore: 0 }, seed: 0, lang: process.env.LAB_LANG || "zh", message: `the grader produced no result (exit status ${process.argv[2]})`, submission: "", startedAt: new Date().toISOString(), durationMs: 0, checks: [] }))' "$native" "$status"
  status=2
  rendered=no
fi
if [ "$rendered" = no ] || [ ! -s "$out_file" ]; then
  mkdir -p "$(dirname "$out_file")"
  (cd "$source_dir" && "${grade[@]}" --from "$native" --format "$format" --out "$out_file" > /dev/null)
fi
exit "$status"
