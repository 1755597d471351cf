// `npm run dist -- student OUT_DIR` builds the learner repository: it installs from its own
// lock file with `npm ci --offline`, its two commands work, its starter grades as the
// starter does (fail, happy path only), a correct client from outside it grades pass, and
// nothing in it reveals or needs the reference solution.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filterMarkdown, STUDENT_SCRIPTS, unavailableCommand, unlinkMissing } from "../../scripts/dist.ts";
import { editionProblems, missingNames } from "../../scripts/edition-text.ts";
import { listFiles, LOADED_HANG_MS, ROOT, run, sharedRuns, solutionModules, STEP_TIMEOUT_MS, studentRepo } from "./dist-support.ts";

let repo: { dir: string; cleanup: () => void };
beforeAll(() => {
  repo = studentRepo("npm-ci");
}, STEP_TIMEOUT_MS);
afterAll(() => repo?.cleanup());

const lab = "labs/33-mcp-lite";
const markdown = () => listFiles(repo.dir).filter((f) => f.endsWith(".md"));

describe("npm run dist -- student", () => {
  it("holds the README, the lesson, the quick start, the starter, the evidence tests, the grader, the fixtures, the homework and the Classroom workflow", () => {
    for (const path of [
      "README.md",
      "lessons/33-mcp-lite/README.md",
      "lessons/33-mcp-lite/README.en.md",
      "docs/quick-start.md",
      `${lab}/starter/src/mcp-client.ts`,
      `${lab}/tests/evidence/happy-path.test.ts`,
      `${lab}/probes/process.test.ts`,
      `${lab}/homework/README.md`,
      `${lab}/lab.ts`,
      "grader/cli.ts",
      "fixtures/mcp-server.mjs",
      ".github/workflows/classroom.yml",
      "package-lock.json",
    ]) {
      expect(existsSync(join(repo.dir, path)), path).toBe(true);
    }
    const readme = readFileSync(join(repo.dir, "README.md"), "utf8");
    expect(readme).toContain("npm test");
    expect(readme).toContain("npm run grade");
    const pkg = JSON.parse(readFileSync(join(repo.dir, "package.json"), "utf8"));
    expect(pkg.scripts).toEqual(STUDENT_SCRIPTS);
    expect(pkg.imports["#submission/*"]).toBe(`./${lab}/starter/*`);
  });

  it("leaves out the solution, the corpus, the project's own tests and the demos that drive the solution", () => {
    for (const path of [`${lab}/solution`, `${lab}/corpus`, "labs/13-process-boundary/solution", "tests", "docs/demos/cli.ts", "docs/demos/cases", "grader/corpus.ts", "scripts/dist.ts"]) {
      expect(existsSync(join(repo.dir, path)), path).toBe(false);
    }
    const files = listFiles(repo.dir).map((f) => relative(repo.dir, f));
    expect(files.filter((f) => /solution|corpus/.test(f))).toEqual([]);
  });

  it("keeps no run of lines of a solution module: outside the starter none at all, in the starter none beyond its given declarations", () => {
    const solution = solutionModules();
    const leaks: string[] = [];
    for (const file of listFiles(repo.dir)) {
      const rel = relative(repo.dir, file);
      if (rel === "package-lock.json") continue;
      const inStarter = rel.startsWith(`${lab}/starter/`);
      const text = readFileSync(file, "utf8");
      // A starter module with no TODO is given whole (errors, options); it is the contract's surface.
      if (inStarter && !/todo\(|TODO\(/.test(text)) continue;
      for (const run of sharedRuns(text, solution, inStarter)) leaks.push(`${rel} shares with solution/src/${run.module}: ${run.first}`);
    }
    expect(leaks).toEqual([]);
    // The check is not vacuous: the workbook's own lesson quotes the solution.
    expect(sharedRuns(readFileSync(join(ROOT, "lessons/33-mcp-lite/README.md"), "utf8"), solution).length).toBeGreaterThan(0);
  });

  it("names no command that needs the solution, the corpus or a script the repository lacks, and every relative link resolves", () => {
    const problems: string[] = [];
    for (const file of markdown()) {
      const text = readFileSync(file, "utf8");
      text.split("\n").forEach((line, i) => {
        if (unavailableCommand(line)) problems.push(`${relative(repo.dir, file)}:${i + 1}: ${line}`);
      });
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^(https?:|mailto:|#)/.test(target)) continue;
        if (!existsSync(resolve(dirname(file), target.split("#")[0]!))) problems.push(`${relative(repo.dir, file)}: broken link ${target}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("turns a lesson excerpt of the solution and a command block that needs it into notes, and keeps the rest", () => {
    const lesson = [
      "<!-- snippet: labs/33-mcp-lite/solution/src/pending.ts#settle -->",
      "```ts",
      "settle(id) {}",
      "```",
      "<!-- snippet: docs/demos/naive-clients.ts#fifo -->",
      "```ts",
      "const queue = [];",
      "```",
      "<!-- run: timeout=300 -->",
      "```bash",
      "npm run grade -- --solution",
      "```",
      "```bash",
      "npm run lab:starter",
      "npm run lab:solution",
      "```",
      "- see `npm run demo -- swap`",
    ].join("\n");
    const out = filterMarkdown(lesson, "en");
    expect(out).not.toContain("settle(id)");
    expect(out).toContain("const queue = [];");
    expect(out).not.toMatch(/--solution|lab:solution|npm run demo|snippet:|run:/);
    expect(out).toContain("npm run lab:starter");
    expect(out.match(/student edition/g)).toHaveLength(2);
  });

  it("leaves instructor-only passages out whole, and calls any other line it would cut a problem of the text", () => {
    const text = [
      "Run the lab.",
      "<!-- instructor-only -->",
      "Instructors: `npm run lab:solution` passes all six.",
      "<!-- /instructor-only -->",
      "The reference sends signals to the whole group;",
      "see `npm run demo -- orphan` for the orphan it leaves.",
    ].join("\n");
    expect(filterMarkdown(text, "en")).not.toContain("Instructors");
    expect(editionProblems(text)).toEqual(["line 6: see `npm run demo -- orphan` for the orphan it leaves."]);
  });

  it("names every file a learner's text points at that the edition does not hold", () => {
    const file = join(repo.dir, "labs", lab, "README.md");
    const text = "Edit `starter/src/pending.ts` and `labs/13-process-boundary/starter/src/run-process.ts`; see `notifications.ts`, `solution/src/server-process.ts` and `fixtures/measure-startup.mjs`.";
    expect(missingNames(text, file, repo.dir, listFiles(repo.dir))).toEqual(["notifications.ts", "solution/src/server-process.ts", "fixtures/measure-startup.mjs"]);
  });

  it("keeps the text of a link whose target the repository lacks, and keeps links that resolve", () => {
    const text = "See [the contract](../../docs/client-contract.md), [the architecture](../../docs/architecture.md#x) and [section 4](#principle).";
    expect(unlinkMissing(text, join(repo.dir, "lessons", "33-mcp-lite"))).toBe("See [the contract](../../docs/client-contract.md), the architecture and [section 4](#principle).");
  });

  it("runs `npm test` there: the type check passes and the six evidence tests run on the starter (one passes, five fail)", () => {
    const test = run("npm", ["test"], repo.dir, { LAB_LANG: "en", LAB_HANG_MS: LOADED_HANG_MS });
    const output = `${test.stdout}\n${test.stderr}`;
    expect(test.status, output).toBe(1);
    expect(output).toMatch(/Test Files\s+5 failed \| 1 passed \(6\)/);
  }, STEP_TIMEOUT_MS);

  it("grades its own starter with `npm run grade`: fail, the happy path only", () => {
    const grade = run("npm", ["run", "--silent", "grade", "--", "--json", "grade.json", "--format", "json", "--lang", "en", "--seed", "3", "--hang-ms", LOADED_HANG_MS], repo.dir);
    expect(grade.status, grade.stderr).toBe(1);
    const result = JSON.parse(readFileSync(join(repo.dir, "grade.json"), "utf8"));
    const graded = result.checks.filter((c: { kind: string }) => c.kind !== "homework");
    expect(graded.filter((c: { status: string }) => c.status === "pass").map((c: { id: string }) => c.id)).toEqual(["evidence/happy-path"]);
    expect(result.status).toBe("fail");
  }, STEP_TIMEOUT_MS);

  it("grades a correct client from outside the repository with `npm run grade -- --submission DIR`: pass", () => {
    const outside = join(dirname(repo.dir), "grade-solution.json");
    const grade = run("npm", ["run", "--silent", "grade", "--", "--submission", join(ROOT, lab, "solution"), "--json", outside, "--format", "json", "--seed", "3", "--hang-ms", LOADED_HANG_MS], repo.dir);
    const result = JSON.parse(readFileSync(outside, "utf8"));
    expect({ exit: grade.status, status: result.status, message: result.message }).toEqual({ exit: 0, status: "pass", message: undefined });
    expect(result.score).toBe(result.maxScore);
  }, STEP_TIMEOUT_MS);

  it("refuses `--solution` there with a clear could-not-grade message", () => {
    writeFileSync(join(repo.dir, "probe.json"), "");
    const grade = run("npm", ["run", "--silent", "grade", "--", "--solution", "--json", "probe.json", "--lang", "en"], repo.dir);
    expect(grade.status).toBe(2);
    expect(JSON.parse(readFileSync(join(repo.dir, "probe.json"), "utf8")).message).toMatch(/solution/);
  }, STEP_TIMEOUT_MS);
});
