// The Classroom 50 autograder entry (grader/platforms/classroom50/autograder.py), run the way
// Classroom 50's runner runs an assignment's autograder.py (foundation50/classroom50,
// cli/gh-teacher/skeleton/dotgithub/scripts/runner.py and cli/gh-teacher/embed/autograder.py):
// the student's repository as the working directory, the bundle's folder in
// CLASSROOM50_BUNDLE_DIR, the identity in CLASSROOM / ASSIGNMENT / SUBMISSION_TAG / COMMIT_URL /
// RELEASE_URL / REVIEW_URL, $GITHUB_OUTPUT for status and summary, exit 0 for every grading
// outcome. Its result.json is checked against the rules of schemas/result-v1.schema.json
// (commit 6e593c79 of that repository), after the runner's own stamping of owner and
// assignment_type.

import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOADED_HANG_MS, ROOT, run, STEP_TIMEOUT_MS, studentRepo } from "./dist-support.ts";

const python = spawnSync("python3", ["--version"]).status === 0;
const work = mkdtempSync(join(tmpdir(), "lab33-classroom50-test-"));
let repo: { dir: string; cleanup: () => void };
beforeAll(() => {
  repo = studentRepo("link");
}, STEP_TIMEOUT_MS);
afterAll(() => {
  repo?.cleanup();
  rmSync(work, { recursive: true, force: true });
});

const RESULT_KEYS = ["schema", "classroom", "assignment", "assignment_type", "owner", "submission", "commit", "release", "review", "datetime", "graded_at", "score", "max-score", "tests", "submitted_by"];
const REQUIRED = ["schema", "classroom", "assignment", "assignment_type", "owner", "submission", "commit", "release", "review", "datetime", "score", "max-score", "tests"];
const UTC = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$/;

// The structural and cross-field rules of classroom50/result/v1.
function resultProblems(result: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(result)) if (!RESULT_KEYS.includes(key)) problems.push(`unknown field ${key}`);
  for (const key of REQUIRED) if (!(key in result)) problems.push(`missing ${key}`);
  if (result.schema !== "classroom50/result/v1") problems.push("schema");
  for (const key of ["classroom", "assignment", "owner", "commit", "release", "review"]) if (typeof result[key] !== "string" || result[key] === "") problems.push(`${key} empty`);
  if (!/^submit\//.test(String(result.submission))) problems.push("submission not submit/…");
  if (!UTC.test(String(result.datetime))) problems.push("datetime format");
  const score = result.score as number;
  const max = result["max-score"] as number;
  if (!Number.isInteger(score) || score < 0 || !Number.isInteger(max) || max < 0 || score > max) problems.push("score/max-score");
  for (const test of result.tests as Array<Record<string, unknown>>) {
    if (typeof test["test-name"] !== "string" || test["test-name"] === "") problems.push("test-name");
    if (typeof test.passed !== "boolean") problems.push(`${test["test-name"]}: passed`);
    const s = test.score as number;
    const m = test["max-score"] as number;
    if (!Number.isInteger(s) || s < 0 || !Number.isInteger(m) || m < 0 || s > m) problems.push(`${test["test-name"]}: score`);
  }
  return problems;
}

describe.skipIf(!python)("Classroom 50 autograder entry (grader/platforms/classroom50/autograder.py)", () => {
  it("grades the checkout's starter with the bundle's grader, never the checkout's, and writes a v1 result.json, the release body and the outputs", () => {
    // The per-assignment bundle: autograder.py beside the learner repository's tree.
    const bundle = join(work, "bundle");
    mkdirSync(bundle);
    cpSync(join(ROOT, "grader/platforms/classroom50/autograder.py"), join(bundle, "autograder.py"));
    cpSync(repo.dir, join(bundle, "lab33-grader"), { recursive: true, verbatimSymlinks: true });
    // The student's checkout: the starter as the learner left it, plus a "grader" of their own
    // that would report full marks if anything ran it.
    const checkout = join(work, "checkout");
    cpSync(join(ROOT, "labs/33-mcp-lite/starter"), join(checkout, "labs/33-mcp-lite/starter"), { recursive: true });
    mkdirSync(join(checkout, "grader/platforms"), { recursive: true });
    writeFileSync(join(checkout, "grader/platforms/run-grade.sh"), "#!/bin/sh\necho '{\"status\":\"pass\",\"score\":100}' > \"$4\"\n");
    const runnerTemp = join(work, "runner-temp");
    mkdirSync(runnerTemp);
    chmodSync(work, 0o755);
    const outputs = join(work, "github-output");
    writeFileSync(outputs, "");
    const done = run("python3", [join(bundle, "autograder.py")], checkout, {
      CLASSROOM50_BUNDLE_DIR: bundle, CLASSROOM: "cs-fall", ASSIGNMENT: "lab33", USERNAME: "alice", SUBMISSION_TAG: "submit/2026-12-01T10-00-00Z-abc1234",
      COMMIT_URL: "https://github.com/org/cs-fall-lab33-alice/commit/abc1234", RELEASE_URL: "https://github.com/org/cs-fall-lab33-alice/releases/tag/submit%2F2026", REVIEW_URL: "https://github.com/org/cs-fall-lab33-alice/compare/a...b",
      GITHUB_OUTPUT: outputs, RUNNER_TEMP: runnerTemp, LAB_NPM_CI: "skip", LAB_LANG: "en", LAB_HANG_MS: LOADED_HANG_MS, TMPDIR: runnerTemp,
    });
    expect(done.status, done.stderr).toBe(0);
    const result = JSON.parse(readFileSync(join(checkout, "result.json"), "utf8"));
    // The runner stamps these two itself (runner.py; the embedded stub says an autograder may omit them).
    expect(result.owner).toBeUndefined();
    const stamped = { ...result, owner: "alice", assignment_type: "individual" };
    expect(resultProblems(stamped)).toEqual([]);
    expect(result).toMatchObject({ classroom: "cs-fall", assignment: "lab33", submission: "submit/2026-12-01T10-00-00Z-abc1234", score: 10, "max-score": 100 });
    const byName = (id: string) => result.tests.find((t: { "test-name": string }) => t["test-name"].startsWith(`${id}: `));
    expect(byName("evidence/happy-path")).toMatchObject({ passed: true, score: 10, "max-score": 10 });
    expect(byName("evidence/timeout")).toMatchObject({ passed: false, score: 0, "max-score": 10, message: expect.stringMatching(/\S/) });
    const homework = result.tests.filter((t: { "test-name": string }) => t["test-name"].startsWith("homework/"));
    expect(homework.length).toBeGreaterThan(0);
    for (const test of homework) expect([test.score, test["max-score"], test.message]).toEqual([0, 0, expect.stringMatching(/^bonus \d+\/\d+ \(not part of the score\)/)]);
    expect(readFileSync(outputs, "utf8")).toBe("status=failure\nsummary=lab33 fail 10/100 + bonus 0/10\n");
    expect(readFileSync(join(checkout, "release-body.md"), "utf8")).toContain("evidence/happy-path");
    // The runner's temp dir holds nothing of the run afterwards.
    expect(existsSync(runnerTemp) && spawnSync("ls", ["-A", runnerTemp], { encoding: "utf8" }).stdout.trim()).toBe("");
  }, STEP_TIMEOUT_MS);

  it("exits 1 (the runner's infrastructure failure) when the bundle has no grader", () => {
    const bundle = join(work, "empty-bundle");
    mkdirSync(bundle);
    const done = run("python3", [join(ROOT, "grader/platforms/classroom50/autograder.py")], work, { CLASSROOM50_BUNDLE_DIR: bundle });
    expect(done.status).toBe(1);
    expect(done.stderr).toContain("no grader in the bundle");
  });
});
