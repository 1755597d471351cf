// The platform files stay in step with the lab: the GitHub Classroom workflow awards one
// test per check of lab.ts with its weight, both platforms call the same grade CLI, and
// the per-check status script reads a saved result correctly.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadManifest, ROOT } from "../../grader/grade.ts";

const platforms = join(ROOT, "grader", "platforms");
const { manifest } = await loadManifest("33-mcp-lite");
const work = mkdtempSync(join(tmpdir(), "lab33-platforms-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("platform files", () => {
  it("give GitHub Classroom one test per graded check, worth the check's weight", () => {
    const yml = readFileSync(join(platforms, "github-classroom", "classroom.yml"), "utf8");
    expect(yml).toContain("npm run grade -- --json grade.json --format markdown");
    for (const check of manifest.checks) {
      expect(yml).toContain(`check-status.mjs grade.json ${check.id}\n          timeout: 1\n          max-score: ${check.weight}\n`);
    }
  });

  it("run the same CLI on Gradescope and render Gradescope's results.json from the saved result", () => {
    const run = readFileSync(join(platforms, "gradescope", "run_autograder"), "utf8");
    expect(run).toContain("npm run --silent grade -- --submission");
    expect(run).toContain("--from /autograder/results/native.json --format gradescope --out /autograder/results/results.json");
    expect(readFileSync(join(platforms, "gradescope", "setup.sh"), "utf8")).toContain("npm ci");
  });

  it("turn a saved result into a pass or fail per check with check-status.mjs", () => {
    const file = join(work, "grade.json");
    writeFileSync(file, JSON.stringify({ status: "fail", checks: [
      { id: "evidence/happy-path", status: "pass", score: 10, maxScore: 10, message: "ok" },
      { id: "evidence/timeout", status: "fail", score: 0, maxScore: 10, message: "hung", hint: "reread" },
    ] }));
    const status = (id: string) => spawnSync(process.execPath, [join(platforms, "github-classroom", "check-status.mjs"), file, id], { encoding: "utf8" }).status;
    expect(status("evidence/happy-path")).toBe(0);
    expect(status("evidence/timeout")).toBe(1);
    expect(status("rubric/process")).toBe(1);
  });
});
