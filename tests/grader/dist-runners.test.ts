// The Exercism and PrairieLearn entry points, run from a learner repository built by
// `npm run dist -- student` as each platform runs them:
// - Exercism's test-runner interface (exercism.org/docs/building/tooling/test-runners/interface):
//   run.sh <slug> <input_dir> <output_dir>, results.json version 3 in output_dir, exit 0
//   whatever the verdict, "error" only when no test could run, the input treated as read only
//   and temporary files in /tmp;
// - PrairieLearn's external grading (prairielearn.readthedocs.io/en/latest/externalGrading/):
//   the upload in /grade/student, the result in /grade/results/results.json with score 0..1,
//   gradable false for a submission that cannot be graded, tests[] with points/max_points.

import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOADED_HANG_MS, ROOT, run, SOLUTION_SRC, STEP_TIMEOUT_MS, studentRepo, unprivilegedUser } from "./dist-support.ts";
import { applyUpload, uploadElement } from "./prairielearn-upload.ts";

const work = mkdtempSync(join(tmpdir(), "lab33-runners-"));
chmodSync(work, 0o755);
const temp = join(work, "tmp");
mkdirSync(temp);
chmodSync(temp, 0o1777);
const gradeUser = unprivilegedUser();
let repo: { dir: string; cleanup: () => void };
beforeAll(() => {
  repo = studentRepo("link");
  chmodSync(join(repo.dir, ".."), 0o755);
}, STEP_TIMEOUT_MS);
afterAll(() => {
  repo?.cleanup();
  rmSync(work, { recursive: true, force: true });
});

// Every path under `dir` (files and folders) with its size and mtime, node_modules excluded.
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.name === "node_modules") continue;
      const stat = statSync(path);
      out.set(relative(dir, path), `${entry.isDirectory() ? "d" : stat.size}:${stat.mtimeMs}`);
      if (entry.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return out;
}

function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [path, state] of after) if (before.get(path) !== state && !(state.startsWith("d:") && before.has(path))) out.push(path);
  for (const path of before.keys()) if (!after.has(path)) out.push(`-${path}`);
  return out.sort();
}

function exercise(name: string, fill: (dir: string) => void): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  fill(dir);
  return `${dir}/`;
}

// Runs the runner as the image does: as an unprivileged user (when the suite runs as root), on
// an input folder that user cannot write (Exercism mounts it read-only), with the output folder
// its own and a private world-writable /tmp. The 20 s budget itself is a benchmark matter
// (docs/instructor-guide.md); on this shared machine the grade's deadline is relaxed so that
// load never turns a check into an error.
function runExercism(input: string, output: string, env: Record<string, string> = {}) {
  mkdirSync(output, { recursive: true });
  const args = [join(repo.dir, "grader/platforms/exercism/run.sh"), "mcp-lite", input, `${output}/`];
  // The platform's own budget (17 s) is for its graders, not for a loaded test machine: the
  // verdicts here are what is checked; the budget has a test of its own (LAB_BUDGET_S 3).
  const vars = { TMPDIR: temp, LAB_LANG: "en", LAB_DEADLINE_MS: "120000", LAB_BUDGET_S: "150", LAB_HANG_MS: LOADED_HANG_MS, ...env };
  if (!gradeUser) return run("bash", args, work, vars);
  readOnlyFor(input);
  run("chown", ["-R", gradeUser, output], work);
  return run("runuser", ["-u", gradeUser, "--", "bash", ...args], work, vars);
}

// Takes every write permission off a folder tree (owned by root, so the grading user can only read it).
function readOnlyFor(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) chmodSync(join(entry.parentPath, entry.name), entry.isDirectory() ? 0o555 : 0o444);
  chmodSync(dir, 0o555);
}

describe("Exercism test runner (grader/platforms/exercism/run.sh)", () => {

  it("writes results.json v3 for the starter: exit 0, fail, one test per check with status, message and test source", () => {
    const input = exercise("ex-starter", (dir) => cpSync(join(ROOT, "labs/33-mcp-lite/starter"), dir, { recursive: true }));
    const output = join(work, "ex-starter-out");
    const projectBefore = snapshot(repo.dir);
    const inputBefore = snapshot(input);
    const done = runExercism(input, output);
    expect(done.status, done.stderr).toBe(0);
    expect(readdirSync(output)).toEqual(["results.json"]);
    const results = JSON.parse(readFileSync(join(output, "results.json"), "utf8"));
    expect(results.version).toBe(3);
    expect(results.status).toBe("fail");
    expect(results.message).toBeUndefined();
    expect(results.tests).toHaveLength(11);
    for (const test of results.tests) {
      expect(Object.keys(test).filter((k) => !["name", "status", "message", "output", "test_code", "task_id"].includes(k))).toEqual([]);
      expect(["pass", "fail", "error"]).toContain(test.status);
      expect(typeof test.test_code).toBe("string");
      if (test.status !== "pass") expect(test.message.length).toBeGreaterThan(0);
    }
    expect(results.tests[0]).toMatchObject({ name: expect.stringMatching(/^evidence\/happy-path: /), status: "pass" });
    expect(results.tests[1].test_code).toContain('describe("evidence/out-of-order"');
    // Nothing written into the input, nor into the project (the grade folders live in the OS
    // temp dir), and the temp dir holds nothing of this run afterwards.
    expect(changes(inputBefore, snapshot(input))).toEqual([]);
    expect(changes(projectBefore, snapshot(repo.dir))).toEqual([]);
    expect(readdirSync(temp).filter((name) => name.startsWith("lab33-"))).toEqual([]);
  }, STEP_TIMEOUT_MS);

  it("reports a syntax error as the top-level error with the file and line, and still exits 0", () => {
    const input = exercise("ex-syntax", (dir) => {
      mkdirSync(join(dir, "src"));
      writeFileSync(join(dir, "src/mcp-client.ts"), "export class McpClient {\n  constructor( {\n}\n");
    });
    const output = join(work, "ex-syntax-out");
    const done = runExercism(input, output);
    expect(done.status).toBe(0);
    const results = JSON.parse(readFileSync(join(output, "results.json"), "utf8"));
    expect(results).toEqual({ version: 3, status: "error", message: expect.stringMatching(/src\/mcp-client\.ts:\d+/), tests: [] });
  }, STEP_TIMEOUT_MS);

  it("stops a grade that outruns its budget and still writes an error result in the interface's shape, leaving nothing running", () => {
    // The constructor never returns: only the grade's deadline (60 s here) would end it, so the
    // 3 s budget always fires first.
    const input = exercise("ex-budget", (dir) => {
      mkdirSync(join(dir, "src"));
      writeFileSync(join(dir, "src/mcp-client.ts"), "export class McpError extends Error {}\nexport class McpClient {\n  constructor() {\n    for (;;) {}\n  }\n}\n");
    });
    const output = join(work, "ex-budget-out");
    const done = runExercism(input, output, { LAB_BUDGET_S: "3", LAB_DEADLINE_MS: "60000" });
    expect(done.status).toBe(0);
    const results = JSON.parse(readFileSync(join(output, "results.json"), "utf8"));
    expect(results).toEqual({ version: 3, status: "error", message: expect.stringContaining("did not finish within 3 s"), tests: [] });
    // Everything the grade started went with the stop: no process names this run's temp dir
    // (a SIGKILLed process that is not yet reaped has an empty command line, so it cannot match).
    const alive = readdirSync("/proc").filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(temp);
      } catch {
        return false;
      }
    });
    expect(alive.map((pid) => { try { return pid + ' ' + readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 200); } catch { return pid; } })).toEqual([]);
    expect(readdirSync(temp).filter((name) => name.startsWith("lab33-"))).toEqual([]);
  }, STEP_TIMEOUT_MS);

  it("exits 2 with a usage line when called without its three arguments", () => {
    const done = run("bash", [join(repo.dir, "grader/platforms/exercism/run.sh"), "mcp-lite"], work);
    expect(done.status).toBe(2);
    expect(done.stderr).toContain("usage:");
  });
});

function runPrairieLearn(name: string, fill: (student: string) => void) {
  const grade = join(work, name);
  mkdirSync(join(grade, "student"), { recursive: true });
  fill(join(grade, "student"));
  // The shared temp dir as the graded side could prepare it: root's tsx cache folder made in advance.
  const planted = join(temp, `tsx-${process.getuid?.() ?? 0}`);
  mkdirSync(planted, { recursive: true, mode: 0o777 });
  const before = readdirSync(temp).sort();
  const done = run("bash", [join(repo.dir, "grader/platforms/prairielearn/run.sh")], work, { LAB_PL_ROOT: grade, LAB_GRADE_USER: gradeUser, TMPDIR: temp, LAB_LANG: "en", LAB_DEADLINE_MS: "120000", LAB_HANG_MS: LOADED_HANG_MS });
  // Neither side used it: nothing new there, and nothing in the planted cache folder.
  expect(readdirSync(temp).sort()).toEqual(before);
  expect(readdirSync(planted)).toEqual([]);
  const file = join(grade, "results", "results.json");
  if (!existsSync(file)) throw new Error(`no results.json\n${done.stdout}\n${done.stderr}`);
  return { exit: done.status, results: JSON.parse(readFileSync(file, "utf8")) };
}

const PL_TOP = ["gradable", "score", "message", "output", "images", "tests", "format_errors"];
const PL_TEST = ["name", "description", "points", "max_points", "message", "output", "images"];

describe("PrairieLearn external grader (grader/platforms/prairielearn/run.sh)", () => {
  it("grades the files the question's upload element keeps of a finished src/: score 1, one test per check with points and max_points", () => {
    // What PrairieLearn puts in /grade/student: the uploaded files its element kept, flat.
    const element = uploadElement(readFileSync(join(ROOT, "grader/platforms/prairielearn/question.html"), "utf8"));
    const upload = [...readdirSync(SOLUTION_SRC), ".DS_Store"];
    const { kept, formatErrors } = applyUpload(element, upload);
    expect(formatErrors).toEqual([]);
    const { exit, results } = runPrairieLearn("pl-pass", (student) => {
      for (const name of kept) cpSync(join(SOLUTION_SRC, name), join(student, name));
    });
    expect(exit).toBe(0);
    expect(Object.keys(results).filter((k) => !PL_TOP.includes(k))).toEqual([]);
    expect(results.gradable).toBe(true);
    expect(results.score).toBe(1);
    for (const test of results.tests) {
      expect(Object.keys(test).filter((k: string) => !PL_TEST.includes(k))).toEqual([]);
      expect(test.points).toBeLessThanOrEqual(test.max_points);
    }
    expect(results.tests.find((t: { name: string }) => t.name === "rubric/process")).toMatchObject({ points: 8, max_points: 8 });
    // The panel totals the tests: full marks read 100/100, the homework bonus only in messages.
    const total = (key: "points" | "max_points") => results.tests.reduce((sum: number, t: Record<string, number>) => sum + t[key]!, 0);
    expect([total("points"), total("max_points")]).toEqual([100, 100]);
  }, STEP_TIMEOUT_MS);

  it("marks a submission that does not compile as not gradable, with the error as a format error", () => {
    const { results } = runPrairieLearn("pl-syntax", (student) => writeFileSync(join(student, "mcp-client.ts"), "export const x: = 1;\n"));
    expect(results.gradable).toBe(false);
    expect(results.format_errors).toEqual([expect.stringMatching(/src\/mcp-client\.ts:1/)]);
    expect(results.score).toBeUndefined();
  }, STEP_TIMEOUT_MS);

  it("ships a sample question whose info.json enables external grading with this entry point", () => {
    const info = JSON.parse(readFileSync(join(ROOT, "grader/platforms/prairielearn/info.json"), "utf8"));
    expect(info.gradingMethod).toBe("External");
    expect(info.externalGradingOptions).toMatchObject({ enabled: true, entrypoint: "/opt/lab33/grader/platforms/prairielearn/run.sh" });
    expect(info.externalGradingOptions.timeout).toBeLessThanOrEqual(600);
    // PrairieLearn runs linux/amd64 images only (docs/dockerImages.md); the base is an exact release.
    const dockerfile = readFileSync(join(ROOT, "grader/platforms/prairielearn/Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/^FROM --platform=linux\/amd64 node:2[2-9]\.\d+\.\d+-[a-z]+-slim$/m);
    expect(dockerfile).toContain("docker build --platform linux/amd64");
  });
});
