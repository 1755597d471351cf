// How checks are built from what a run left behind (grader/build-checks.ts), on synthetic runs:
// a test that never finished never counts as passed, a test file that never started leaves
// its check unknown, and the tests that passed stay visible inside a check that did not.

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildChecks, translatedTitle, type BuildInput, type ProgressRecord, type VitestJson } from "../../grader/build-checks.ts";
import { lab } from "../../labs/33-mcp-lite/lab.ts";

const labDir = join(import.meta.dirname, "..", "..", "labs", "33-mcp-lite");
const file = (rel: string) => join(labDir, rel);

function input(over: Partial<BuildInput>): BuildInput {
  return {
    manifest: lab,
    lang: "en",
    labDir,
    json: undefined,
    run: { code: null, signal: "SIGKILL", timedOut: true, durationMs: 90_000, output: "", seen: new Map(), leftovers: [], pid: undefined, records: [] },
    progress: [],
    workspaces: [],
    strays: [],
    survivors: [],
    deadlineMs: 90_000,
    homeworkFiles: [],
    ...over,
  };
}

const ID_TESTS = ["answers 16 concurrent calls", "settles nothing with a string id", "never hands a late answer", "numbers requests"];

function progressFor(rel: string, describeId: string, titles: string[], endedBefore: number): ProgressRecord[] {
  const out: ProgressRecord[] = [];
  titles.forEach((title, i) => {
    out.push({ event: "start", file: file(rel), ancestors: [describeId], title });
    if (i < endedBefore) out.push({ event: "end", file: file(rel), ancestors: [describeId], title, state: "passed", errors: [] });
  });
  return out;
}

describe("grader/results: check building", () => {
  it("makes a check with a test that never finished an error worth 0, never a pass (busy loop in listTools)", () => {
    // Three tests of rubric/id-matching passed; the fourth started and the run was killed at
    // the deadline while it spun.
    const progress = progressFor("probes/id-matching.test.ts", "rubric/id-matching", ID_TESTS, 3);
    const { checks, error } = buildChecks(input({ progress }));
    expect(error).toMatch(/deadline/);
    const id = checks.find((c) => c.id === "rubric/id-matching")!;
    expect(id.status).toBe("error");
    expect(id.score).toBe(0);
    expect(id.message).toContain("1 of 4 tests never finished: numbers requests");
    expect(id.message).toContain("passed: answers 16 concurrent calls");
    expect(id.message).not.toMatch(/all \d+ tests passed/);
  });

  it("does not pass a check one of whose test files never started when the run was stopped", () => {
    // lifecycle.test.ts finished; lifecycle-stress.test.ts never got a worker.
    const progress = progressFor("probes/lifecycle.test.ts", "rubric/lifecycle", ["a", "b"], 2);
    const { checks } = buildChecks(input({ progress }));
    const lifecycle = checks.find((c) => c.id === "rubric/lifecycle")!;
    expect(lifecycle.status).toBe("error");
    expect(lifecycle.message).toContain("probes/lifecycle-stress.test.ts");
  });

  it("makes every rubric check an error, never a pass, when a probe file could not run at all", () => {
    // id-matching.test.ts ran and passed; model.test.ts (tests of every rubric check) failed to load.
    const assertion = (title: string) => ({ ancestorTitles: ["rubric/id-matching"], title, fullName: title, status: "passed" as const, failureMessages: [] });
    const json: VitestJson = {
      numTotalTests: 4,
      success: false,
      testResults: [
        { name: file("probes/id-matching.test.ts"), status: "passed", message: "", assertionResults: ID_TESTS.map(assertion) },
        { name: file("probes/model.test.ts"), status: "failed", message: "Error: Cannot find package 'fast-check'", assertionResults: [] },
      ],
    };
    const { checks } = buildChecks(input({ json, run: { ...input({}).run, code: 1, signal: null, timedOut: false } }));
    const id = checks.find((c) => c.id === "rubric/id-matching")!;
    expect(id.status).toBe("error");
    expect(id.score).toBe(0);
    expect(id.message).toContain("probes/model.test.ts could not run: Error: Cannot find package 'fast-check'");
    expect(checks.find((c) => c.id === "evidence/happy-path")!.status).not.toBe("pass");
  });

  it("lists the tests that passed inside a check that failed", () => {
    const assertion = (title: string, status: "passed" | "failed") => ({
      ancestorTitles: ["rubric/id-matching"], title, fullName: title, status, failureMessages: status === "failed" ? ["Error: needs TODO(timeout) first: hung"] : [],
    });
    const json: VitestJson = {
      numTotalTests: 4,
      success: false,
      testResults: [{
        name: file("probes/id-matching.test.ts"), status: "failed", message: "",
        assertionResults: [assertion(ID_TESTS[0]!, "passed"), assertion(ID_TESTS[1]!, "passed"), assertion(ID_TESTS[2]!, "failed"), assertion(ID_TESTS[3]!, "passed")],
      }],
    };
    const run = { code: 1, signal: null, timedOut: false, durationMs: 1, output: "", seen: new Map(), leftovers: [], pid: undefined, records: [] };
    const { checks } = buildChecks(input({ json, run }));
    const id = checks.find((c) => c.id === "rubric/id-matching")!;
    expect(id.status).toBe("fail");
    expect(id.message).toContain("1 of 4 tests failed: never hands a late answer — needs TODO(timeout) first: hung");
    expect(id.message).toContain(`passed: ${ID_TESTS[0]}; ${ID_TESTS[1]}; ${ID_TESTS[3]}`);
    expect(id.tests.filter((t) => t.status === "pass")).toHaveLength(3);
  });

  it("names tests and homework checks in the report's language, keeping the title the tests wrote", () => {
    const table = { "numbers requests": "请求编号", "answers 16": "十六个" };
    expect(translatedTitle(table, "numbers requests")).toBe("请求编号");
    // The longest fixed start wins; the variable rest is kept as it is.
    expect(translatedTitle({ ...table, "answers 16 concurrent": "十六个并发" }, "answers 16 concurrent calls")).toBe("十六个并发 calls");
    expect(translatedTitle(table, "something else")).toBeUndefined();
    const manifest = { ...lab, testTitles: { zh: table } };
    const progress = progressFor("probes/id-matching.test.ts", "rubric/id-matching", ID_TESTS, 3);
    const zh = buildChecks(input({ manifest, lang: "zh", progress })).checks.find((c) => c.id === "rubric/id-matching")!;
    const numbered = zh.tests.find((x) => x.title === "numbers requests")!;
    expect(numbered.label).toBe("请求编号");
    expect(zh.message).toContain("请求编号");
    // No table for English: the titles as written, no label.
    const en = buildChecks(input({ manifest, progress })).checks.find((c) => c.id === "rubric/id-matching")!;
    expect(en.tests.every((x) => x.label === undefined)).toBe(true);
    // Homework checks carry the manifest's title, not their id.
    const homework = progressFor("homework/stress.test.ts", "homework/stress-100", ["matches 100"], 1);
    const stress = buildChecks(input({ lang: "zh", progress: homework })).checks.find((c) => c.id === "homework/stress-100")!;
    expect(stress.title).toBe(lab.homeworkTitles!["homework/stress-100"]!.zh);
  });

  it("quotes a test in the orphan probe's messages by its title in the report's language", () => {
    const manifest = { ...lab, testTitles: { zh: { "numbers requests": "请求编号" } } };
    const progress = progressFor("probes/id-matching.test.ts", "rubric/id-matching", ID_TESTS, 4);
    const test = "rubric/id-matching > numbers requests";
    const left = { workspaces: [{ dir: "/w", test, pids: [41, 42], alive: [41] }], strays: [{ test, pid: 43, command: "sleep 60" }], survivors: [{ pid: 42, command: "node" }] };
    const orphans = (lang: "zh" | "en") => buildChecks(input({ manifest, lang, progress, ...left })).checks.find((c) => c.id === "probe/orphans")!.message;
    expect(orphans("zh")).toContain("「rubric/id-matching > 请求编号」");
    expect(orphans("zh")).toContain("由「rubric/id-matching > 请求编号」启动");
    expect(orphans("zh")).not.toContain("numbers requests");
    expect(orphans("en")).toContain('"rubric/id-matching > numbers requests"');
  });
});
