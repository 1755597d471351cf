// The platform files stay in step with the lab and with each platform's published contract:
// the GitHub Classroom workflow gives every check (homework included) a runner worth its
// weight, and the reporter's own lookup finds every runner's result; the per-check status
// script reads a saved result; the upload locator finds the client in every layout.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadManifest, ROOT } from "../../grader/grade.ts";

const platforms = join(ROOT, "grader", "platforms");
const { manifest, labDir } = await loadManifest("33-mcp-lite");
const work = mkdtempSync(join(tmpdir(), "lab33-platforms-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  with: Record<string, string>;
  env: Record<string, string>;
}

// The steps of the workflow's one job, read line by line (each step starts with "      - ";
// its keys and its with/env maps are indented below it). Enough for this file's plain YAML.
function workflowSteps(yml: string): Step[] {
  const steps: Step[] = [];
  let step: Step | undefined;
  let map: "with" | "env" | undefined;
  for (const line of yml.split("\n")) {
    const start = /^ {6}- (\w[\w-]*):\s*(.*)$/.exec(line);
    if (start) {
      step = { with: {}, env: {} };
      steps.push(step);
      map = undefined;
      (step as unknown as Record<string, string>)[start[1]!] = unquote(start[2]!);
      continue;
    }
    if (!step) continue;
    const key = /^ {8}(\w[\w-]*):\s*(.*)$/.exec(line);
    if (key) {
      if (key[1] === "with" || key[1] === "env") map = key[1];
      else {
        map = undefined;
        (step as unknown as Record<string, string>)[key[1]!] = unquote(key[2]!);
      }
      continue;
    }
    const entry = /^ {10}([^\s:][^:]*):\s*(.*)$/.exec(line);
    if (entry && map) step[map][entry[1]!] = unquote(entry[2]!);
  }
  return steps;
}

function unquote(value: string): string {
  return value.replace(/^"(.*)"$/, "$1");
}

const yml = readFileSync(join(platforms, "github-classroom", "classroom.yml"), "utf8");
const steps = workflowSteps(yml);
const graders = steps.filter((s) => s.uses?.startsWith("classroom-resources/autograding-command-grader@"));
const reporter = steps.find((s) => s.uses?.startsWith("classroom-resources/autograding-grading-reporter@"))!;
const homeworkIds = readdirSync(join(labDir, manifest.homeworkDir))
  .filter((f) => f.endsWith(".test.ts"))
  .flatMap((f) => [...readFileSync(join(labDir, manifest.homeworkDir, f), "utf8").matchAll(/^describe\("(homework\/[^"]+)"/gm)].map((m) => m[1]!));

describe("GitHub Classroom workflow", () => {
  it("has one command-grader runner per graded check and per homework check, worth its weight", () => {
    const expected = [...manifest.checks.map((c) => [c.id, String(c.weight)]), ...homeworkIds.map((id) => [id, String(manifest.homeworkWeight)])];
    expect(homeworkIds.length).toBeGreaterThan(0);
    expect(graders.map((s) => [s.with["test-name"], s.with["max-score"]]).sort()).toEqual(expected.sort());
    for (const step of graders) expect(step.with.command).toBe(`node grader/platforms/github-classroom/check-status.mjs grade.json ${step.with["test-name"]}`);
    expect(yml).toContain("npm run grade -- --json grade.json --format markdown");
  });

  it("sets up Node 22 or newer", () => {
    const setup = steps.find((s) => s.uses?.startsWith("actions/setup-node@"))!;
    expect(Number(setup.with["node-version"])).toBeGreaterThanOrEqual(22);
  });

  it("names every runner's result exactly as the reporter looks it up, and the reporter totals the points", () => {
    // A saved grade: everything passes but one evidence test; two homework checks pass.
    const grade = join(work, "grade.json");
    const passingHomework = new Set(homeworkIds.slice(0, 2));
    writeFileSync(grade, JSON.stringify({
      status: "fail",
      checks: [
        ...manifest.checks.map((c) => ({ id: c.id, status: c.id === "evidence/timeout" ? "fail" : "pass", score: c.id === "evidence/timeout" ? 0 : c.weight, maxScore: c.weight, message: "m" })),
        ...homeworkIds.map((id) => ({ id, status: passingHomework.has(id) ? "pass" : "fail", score: 0, maxScore: 2, message: "m" })),
      ],
    }));
    // What autograding-command-grader puts in each step's `result` output: base64 of its JSON.
    const outputs = new Map<string, string>();
    for (const step of graders) {
      const [, script, file, id] = step.with.command!.split(" ");
      const status = spawnSync(process.execPath, [join(ROOT, script!), file === "grade.json" ? grade : file!, id!], { encoding: "utf8" }).status === 0 ? "pass" : "fail";
      const maxScore = Number(step.with["max-score"]);
      const result = { version: 1, status, max_score: maxScore, tests: [{ name: step.with["test-name"], status, score: status === "pass" ? maxScore : 0 }] };
      outputs.set(step.id!, Buffer.from(JSON.stringify(result)).toString("base64"));
    }
    // The reporter's environment: its env map with the step outputs substituted.
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(reporter.env)) {
      env[name] = value.replace(/\$\{\{\s*steps\.([\w-]+)\.outputs\.result\s*\}\}/, (_, id: string) => outputs.get(id) ?? "");
    }
    // The reporter's own lookup (autograding-grading-reporter src/main.js) and total (notify-classroom.js).
    const runnerResults = reporter.with.runners!.split(",").map((runner) => {
      const encoded = env[`${runner.trim().toUpperCase()}_RESULTS`];
      expect(encoded, `no ${runner.trim().toUpperCase()}_RESULTS for runner ${runner}`).toBeTruthy();
      return { runner, results: JSON.parse(Buffer.from(encoded!, "base64").toString("utf8")) as { max_score: number; tests: Array<{ score: number }> } };
    });
    expect(runnerResults.map((r) => r.runner).sort()).toEqual(graders.map((s) => s.id).sort());
    const maxPoints = runnerResults.reduce((sum, r) => sum + r.results.max_score, 0);
    const totalPoints = runnerResults.reduce((sum, r) => sum + r.results.tests.reduce((s, t) => s + t.score, 0), 0);
    const graded = manifest.checks.reduce((sum, c) => sum + c.weight, 0);
    expect({ totalPoints, maxPoints }).toEqual({ totalPoints: graded - 10 + 2 * manifest.homeworkWeight, maxPoints: graded + homeworkIds.length * manifest.homeworkWeight });
  });
});

describe("platform scripts", () => {
  it("turn a saved result into a pass or fail per check with check-status.mjs", () => {
    const file = join(work, "status.json");
    writeFileSync(file, JSON.stringify({ status: "fail", checks: [
      { id: "evidence/happy-path", status: "pass", score: 10, maxScore: 10, message: "ok" },
      { id: "evidence/timeout", status: "fail", score: 0, maxScore: 10, message: "hung", hint: "reread" },
    ] }));
    const status = (id: string) => spawnSync(process.execPath, [join(platforms, "github-classroom", "check-status.mjs"), file, id], { encoding: "utf8" }).status;
    expect(status("evidence/happy-path")).toBe(0);
    expect(status("evidence/timeout")).toBe(1);
    expect(status("rubric/process")).toBe(1);
  });

  // Lays out an upload, runs the locator, returns the files it copied (relative to OUT).
  function locate(name: string, layout: Record<string, string>, links: Record<string, string> = {}): string[] {
    const upload = join(work, name, "upload");
    const out = join(work, name, "out");
    for (const [path, text] of Object.entries(layout)) {
      mkdirSync(join(upload, path, ".."), { recursive: true });
      writeFileSync(join(upload, path), text);
    }
    mkdirSync(upload, { recursive: true });
    for (const [path, target] of Object.entries(links)) symlinkSync(target, join(upload, path));
    const done = spawnSync(process.execPath, [join(platforms, "locate-submission.mjs"), upload, out], { encoding: "utf8" });
    expect(done.status).toBe(0);
    const files: string[] = [];
    const walk = (dir: string, prefix: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(join(dir, entry.name), `${prefix}${entry.name}/`);
        else files.push(`${prefix}${entry.name}`);
      }
    };
    walk(out, "");
    return files.sort();
  }

  it("find the client in every upload layout and copy it shaped like the starter", () => {
    const client = { "src/mcp-client.ts": "x", "src/pending.ts": "y" };
    expect(locate("root", client)).toEqual(["src/mcp-client.ts", "src/pending.ts"]);
    expect(locate("folder", { "starter/src/mcp-client.ts": "x", "starter/package.json": "{}" })).toEqual(["package.json", "src/mcp-client.ts"]);
    expect(locate("github", { "lab33-alice-main/README.md": "r", "lab33-alice-main/labs/33-mcp-lite/starter/src/mcp-client.ts": "x" })).toEqual(["src/mcp-client.ts"]);
    expect(locate("bare", { "mcp-client.ts": "x", "pending.ts": "y" })).toEqual(["src/mcp-client.ts", "src/pending.ts"]);
    expect(locate("shallowest", { "a/src/mcp-client.ts": "shallow", "b/c/src/mcp-client.ts": "deep" })).toEqual(["src/mcp-client.ts"]);
    expect(locate("none", { "notes.txt": "n" })).toEqual([]);
  });

  it("skip node_modules, __MACOSX and symbolic links", () => {
    expect(locate("skips", { "node_modules/x/src/mcp-client.ts": "n", "__MACOSX/src/mcp-client.ts": "m", "work/src/mcp-client.ts": "x", "work/node_modules/y.js": "n" })).toEqual(["src/mcp-client.ts"]);
    expect(locate("links", { "src/mcp-client.ts": "x" }, { "src/secret.ts": "/etc/hostname" }).sort()).toEqual(["src/mcp-client.ts"]);
  });
});
