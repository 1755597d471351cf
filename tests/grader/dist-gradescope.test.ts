// `npm run dist -- gradescope OUT_ZIP` builds the autograder zip, and its scripts follow
// Gradescope's published contract (gradescope-autograders.readthedocs.io, "Autograder
// Specifications"): setup.sh and run_autograder at the zip's root, the zip unpacked to
// /autograder/source, the upload in /autograder/submission, the result in
// /autograder/results/results.json. Here they run on a fake /autograder tree
// (LAB_AUTOGRADER_ROOT), with the installs skipped and the workbook's packages linked in.

import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGradescope } from "../../scripts/dist.ts";
import { LOADED_HANG_MS, ROOT, run, SOLUTION_SRC, STEP_TIMEOUT_MS, unprivilegedUser } from "./dist-support.ts";

const work = mkdtempSync(join(tmpdir(), "lab33-gradescope-"));
chmodSync(work, 0o755); // the unprivileged grading user must reach the fake /autograder
const autograder = join(work, "autograder");
const zip = join(work, "autograder.zip");
/** Runs the student's code as `nobody` when the test runs as root (as CI does), like Gradescope's lab33 user. */
const gradeUser = unprivilegedUser();
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(() => {
  buildGradescope(zip);
  mkdirSync(join(autograder, "source"), { recursive: true });
  const unzip = run("unzip", ["-q", zip, "-d", join(autograder, "source")], work);
  if (unzip.status !== 0) throw new Error(`unzip failed: ${unzip.stderr}`);
  symlinkSync(join(ROOT, "node_modules"), join(autograder, "source", "node_modules"), "dir");
}, STEP_TIMEOUT_MS);

const starter = join(ROOT, "labs", "33-mcp-lite", "starter");

// The machine's shared /tmp as the graded side could prepare it: world-writable, with the
// folder root's tsx would use for its compile cache already made (by anyone).
function sharedTemp(): string {
  const temp = join(work, "tmp");
  mkdirSync(join(temp, `tsx-${process.getuid?.() ?? 0}`), { recursive: true });
  chmodSync(temp, 0o1777);
  chmodSync(join(temp, `tsx-${process.getuid?.() ?? 0}`), 0o777);
  return temp;
}

// Puts an upload in /autograder/submission, runs run_autograder, returns results.json.
function gradeUpload(layout: (submission: string) => void): { exit: number | null; results: GradescopeResults; stdout: string } {
  const submission = join(autograder, "submission");
  rmSync(submission, { recursive: true, force: true });
  rmSync(join(autograder, "results"), { recursive: true, force: true });
  mkdirSync(submission, { recursive: true });
  layout(submission);
  const temp = sharedTemp();
  const before = readdirSync(temp).sort();
  const done = run("bash", [join(autograder, "source", "run_autograder")], autograder, { LAB_AUTOGRADER_ROOT: autograder, LAB_GRADE_USER: gradeUser, LAB_LANG: "en", TMPDIR: temp, LAB_HANG_MS: LOADED_HANG_MS });
  // Neither side used the shared temp dir: run_autograder's own work folder is gone, nothing
  // else appeared (no tsx-<uid> cache of root's steps, no grade folders), and the cache folder
  // planted where root's tsx would look is still empty.
  expect(readdirSync(temp).sort()).toEqual(before);
  expect(readdirSync(join(temp, `tsx-${process.getuid?.() ?? 0}`))).toEqual([]);
  const file = join(autograder, "results", "results.json");
  if (!existsSync(file)) throw new Error(`no results.json\n${done.stdout}\n${done.stderr}`);
  return { exit: done.status, results: JSON.parse(readFileSync(file, "utf8")), stdout: done.stdout };
}

interface GradescopeResults {
  score: number;
  output: string;
  tests: Array<{ name: string; score: number; max_score: number; status: string; output: string }>;
  [key: string]: unknown;
}

// The fields and values Gradescope documents for results.json.
const TOP_LEVEL = ["score", "execution_time", "output", "output_format", "test_output_format", "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"];
const TEST_FIELDS = ["score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags", "visibility", "extra_data"];
const FORMATS = ["text", "html", "simple_format", "md", "ansi"];
const VISIBILITY = ["hidden", "after_due_date", "after_published", "visible"];

function expectGradescopeShape(results: GradescopeResults): void {
  expect(Object.keys(results).filter((k) => !TOP_LEVEL.includes(k))).toEqual([]);
  expect(typeof results.score).toBe("number");
  for (const key of ["output_format", "test_output_format", "test_name_format"]) expect(FORMATS).toContain(results[key]);
  expect(VISIBILITY).toContain(results.visibility);
  expect(VISIBILITY).toContain(results.stdout_visibility);
  for (const test of results.tests) {
    expect(Object.keys(test).filter((k) => !TEST_FIELDS.includes(k))).toEqual([]);
    expect(["passed", "failed"]).toContain(test.status);
    expect(test.score).toBeLessThanOrEqual(test.max_score);
  }
}

const byName = (results: GradescopeResults, id: string) => results.tests.find((t) => t.name.startsWith(`${id} `))!;

describe("npm run dist -- gradescope", () => {
  it("puts setup.sh and run_autograder, executable, at the zip's root, with the starter and no solution", () => {
    const names = run("unzip", ["-Z1", zip], work).stdout.split("\n").filter(Boolean);
    expect(names).toContain("setup.sh");
    expect(names).toContain("run_autograder");
    expect(names).toContain("labs/33-mcp-lite/starter/src/mcp-client.ts");
    expect(names.filter((n) => /solution|corpus/.test(n))).toEqual([]);
    const modes = run("unzip", ["-Z", zip, "setup.sh", "run_autograder"], work).stdout;
    expect(modes.match(/^-rwxr-xr-x/gm)).toHaveLength(2);
  });

  it("has setup.sh install Node 22 or newer: with the install skipped it refuses an older node", () => {
    const major = Number(process.versions.node.split(".")[0]);
    const setup = run("bash", [join(autograder, "source", "setup.sh")], work, { LAB_SOURCE: join(autograder, "source"), LAB_NODE_INSTALL: "skip", LAB_NPM_CI: "skip", LAB_BUILD_CHECK: "skip", LAB_GRADE_USER: "" });
    if (major < 22) {
      expect(setup.status).toBe(1);
      expect(setup.stderr).toContain("Node 22 or newer is required");
    } else {
      expect(setup.status).toBe(0);
    }
    const script = readFileSync(join(autograder, "source", "setup.sh"), "utf8");
    expect(script).toContain("latest-${line}");
    expect(script).toContain("sha256sum -c");
    expect(script).not.toMatch(/nodesource|--solution/i);
  }, STEP_TIMEOUT_MS);

  it("has a build check that fails the image build unless the starter grades to its pinned verdict", () => {
    const broken = join(work, "broken-starter");
    mkdirSync(join(broken, "src"), { recursive: true });
    writeFileSync(join(broken, "src", "mcp-client.ts"), "export const McpClient = ;\n");
    const env = { LAB_SOURCE: join(autograder, "source"), LAB_GRADE_USER: gradeUser, LAB_LANG: "en", TMPDIR: sharedTemp(), LAB_HANG_MS: LOADED_HANG_MS };
    const script = join(autograder, "source", "grader", "platforms", "gradescope", "build-check.sh");
    const bad = run("bash", [script], work, { ...env, LAB_BUILD_CHECK_SUBMISSION: broken });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/build check failed: the starter graded error/);
    const good = run("bash", [script], work, env);
    expect(good.status, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/build check: the starter graded fail 10\/100/);
    expect(readFileSync(join(autograder, "source", "setup.sh"), "utf8")).toContain("grader/platforms/gradescope/build-check.sh");
  }, STEP_TIMEOUT_MS);

  it("grades a correct upload with its files at the root: full score plus the homework bonus, as plain text", () => {
    const { results } = gradeUpload((submission) => cpSync(SOLUTION_SRC, join(submission, "src"), { recursive: true }));
    expectGradescopeShape(results);
    const graded = results.tests.filter((t) => !t.name.startsWith("homework/"));
    expect(graded.map((t) => t.status)).toEqual(graded.map(() => "passed"));
    // The total is the graded 100 plus whatever homework bonus passed (Gradescope adds the tests up).
    expect(results.score).toBe(results.tests.reduce((sum, t) => sum + t.score, 0));
    expect(results.score).toBeGreaterThanOrEqual(graded.reduce((sum, t) => sum + t.max_score, 0));
    expect(results.tests.filter((t) => t.name.startsWith("homework/")).length).toBeGreaterThan(0);
    expect(results.output).toMatch(/^33-mcp-lite: pass/);
    expect(results.output_format).toBe("text");
  }, STEP_TIMEOUT_MS);

  it("grades the starter zipped as a folder (starter/src/…): the happy path only", () => {
    const { results } = gradeUpload((submission) => cpSync(starter, join(submission, "starter"), { recursive: true }));
    expectGradescopeShape(results);
    expect(byName(results, "evidence/happy-path").status).toBe("passed");
    expect(results.tests.filter((t) => !t.name.startsWith("homework/") && t.status === "passed")).toHaveLength(1);
    expect(results.score).toBe(10);
    // Angle brackets in a hint reach the student as text.
    expect(byName(results, "evidence/out-of-order").output).toContain("Map<id, Pending>");
  }, STEP_TIMEOUT_MS);

  it("finds the client in a GitHub download (repo-main/labs/33-mcp-lite/starter/src/…)", () => {
    const { results } = gradeUpload((submission) => {
      const nested = join(submission, "lab33-alice-main", "labs", "33-mcp-lite", "starter");
      cpSync(SOLUTION_SRC, join(nested, "src"), { recursive: true });
      writeFileSync(join(submission, "lab33-alice-main", "README.md"), "# my repo\n");
    });
    expectGradescopeShape(results);
    expect(results.output).toMatch(/^33-mcp-lite: pass/);
  }, STEP_TIMEOUT_MS);

  it("reports a syntax error in bare src/ files as could-not-grade with the file and line, score 0", () => {
    const { results, exit } = gradeUpload((submission) => writeFileSync(join(submission, "mcp-client.ts"), "export class McpClient {\n  constructor( {\n}\n"));
    expect(exit).toBe(0);
    expectGradescopeShape(results);
    expect(results.score).toBe(0);
    expect(results.output).toMatch(/^33-mcp-lite: error/);
    expect(results.output).toMatch(/src\/mcp-client\.ts:\d+/);
  }, STEP_TIMEOUT_MS);
});
