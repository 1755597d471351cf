#!/usr/bin/env python3
"""Lab 33 autograder for Classroom 50 (the Fifty Foundation's GitHub-based classroom).

Classroom 50 runs `autograder.py` from the classroom's config repository (per assignment:
`<classroom>/autograders/<slug>/autograder.py`, published with the files beside it as the
assignment's bundle) inside its reusable autograde-runner workflow, with the student's
repository checked out as the working directory. This file is that entry point; the grader it
runs is NOT the checkout's copy (the student can edit that) but the one shipped in the bundle:

  <bundle>/autograder.py    this file
  <bundle>/lab33-grader/    `npm run dist -- student` output (the learner repository, no solution)

Steps: copy lab33-grader/ to a fresh folder under $RUNNER_TEMP, `npm ci` there, grade the
checkout's labs/33-mcp-lite/starter (the learner's working copy; the whole checkout is searched
when that folder is missing) with grader/platforms/run-grade.sh, then write in the working
directory what the runner reads:
  result.json       classroom50/result/v1 (grader/platforms/classroom50/result.mjs);
  release-body.md   the grade's Markdown report, for the submission's release;
and status/summary lines appended to $GITHUB_OUTPUT. Exit 0 whenever a result was written
(pass, fail or could not grade alike); exit 1 only when the grading machinery itself failed
(no bundled grader, npm ci failed), which the runner turns into an error result.

Knobs: LAB_LANG (zh|en, default zh), LAB_NPM_CI=skip (use the bundled tree's node_modules; for
tests), CLASSROOM50_BUNDLE_DIR (set by the runner; default: this file's folder).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile


def fail(message: str) -> "NoReturn":  # type: ignore[name-defined]
    print(f"::error::lab33 autograder: {message}", file=sys.stderr)
    sys.exit(1)


def main() -> int:
    bundle = pathlib.Path(os.environ.get("CLASSROOM50_BUNDLE_DIR") or pathlib.Path(__file__).resolve().parent)
    shipped = bundle / "lab33-grader"
    if not (shipped / "grader" / "platforms" / "run-grade.sh").is_file():
        fail(f"no grader in the bundle ({shipped}); see docs/instructor-guide.md, Classroom 50")
    checkout = pathlib.Path.cwd()
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="lab33-classroom50-", dir=os.environ.get("RUNNER_TEMP") or None))
    try:
        grader = scratch / "grader"
        # symlinks=True: a linked node_modules (tests) stays a link instead of being copied.
        shutil.copytree(shipped, grader, symlinks=True)
        if os.environ.get("LAB_NPM_CI") != "skip":
            if subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=grader).returncode != 0:
                fail("npm ci failed in the bundled grader")
        starter = checkout / "labs" / "33-mcp-lite" / "starter"
        upload = starter if starter.is_dir() else checkout
        native = scratch / "native.json"
        graded = subprocess.run(["bash", str(grader / "grader/platforms/run-grade.sh"), str(upload), str(scratch / "work"), "json", str(native)], cwd=grader)
        print(f"lab33 autograder: grade exit status {graded.returncode} (0 pass, 1 fail, 2 could not grade)")
        if not native.is_file():
            fail("the grader wrote no result")
        # The grade command's launcher: its prebuilt bundle (npm ci built it), else cli.ts through tsx.
        cli = [shutil.which("node") or "node", str(grader / "grader/cli.mjs")]
        with open(checkout / "release-body.md", "w", encoding="utf-8") as body:
            subprocess.run([*cli, "--from", str(native), "--format", "markdown"], cwd=grader, stdout=body, env={**os.environ, "TSX_DISABLE_CACHE": "1", "TMPDIR": str(scratch)})
        outputs = subprocess.run(["node", str(grader / "grader/platforms/classroom50/result.mjs"), str(native), str(checkout / "result.json")], capture_output=True, text=True)
        if outputs.returncode != 0:
            fail(f"could not write result.json: {outputs.stderr.strip()}")
        print(outputs.stdout, end="")
        if os.environ.get("GITHUB_OUTPUT"):
            with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as sink:
                sink.write(outputs.stdout)
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
