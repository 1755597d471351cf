// The learner's part of the text report: progress by TODO, the wire trace of the first
// failing test, and paths of the grader's private copy mapped back to the learner's files.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TodoDef } from "../../grader/manifest.ts";
import { lessonLink, mapPaths, renderProgress, renderTrace, todoMarkers, todoProgress, traceLine } from "../../grader/report/progress.ts";
import { renderText } from "../../grader/report/text.ts";
import type { CheckResult, GradeResult } from "../../grader/grade-result.ts";
import { makeTempDir } from "../../fixtures/index.ts";

const L = "lessons/33-mcp-lite/README.md";
const todos: TodoDef[] = [
  { tag: "map", title: { zh: "表", en: "map" }, section: "7.1", lesson: `${L}#settle`, checks: ["evidence/out-of-order"] },
  { tag: "timeout", title: { zh: "超时", en: "timeout" }, section: "7.5", lesson: `${L}#timeout`, checks: ["evidence/timeout", "rubric/lifecycle"] },
  { tag: "exit", title: { zh: "退出", en: "exit" }, section: "7.9", lesson: `${L}#process-exit`, checks: ["evidence/server-exit", "rubric/lifecycle"] },
  { tag: "framing", title: { zh: "分帧", en: "framing" }, section: "7.12", lesson: `${L}#framing`, checks: [] },
];

function check(id: string, status: CheckResult["status"], extra: Partial<CheckResult> = {}): CheckResult {
  return { id, kind: id.startsWith("rubric/") ? "rubric" : "evidence", status, score: 0, maxScore: 10, message: "", title: id, standard: "", deduction: "", tests: [], ...extra };
}

describe("progress by TODO", () => {
  it("marks a TODO done when its checks pass, not yet while its marker is there, broken once the marker is gone", () => {
    const checks = [check("evidence/out-of-order", "fail"), check("evidence/timeout", "pass"), check("rubric/lifecycle", "pass"), check("evidence/server-exit", "fail")];
    const states = (markers: Set<string> | undefined) => todoProgress(todos, checks, "zh", markers).map((p) => p.state);
    expect(states(new Set(["map", "exit"]))).toEqual(["not-yet", "done", "not-yet", "unchecked"]);
    expect(states(new Set(["exit"]))).toEqual(["broken", "done", "not-yet", "unchecked"]);
  });

  it("counts a failure that needs another TODO first as waiting on that TODO, and points the next step at it", () => {
    const owned: TodoDef[] = [
      { ...todos[0]!, checks: ["evidence/out-of-order", "rubric/id-matching"], tests: [{ check: "rubric/id-matching", test: "never hands a late answer" }] },
      { ...todos[1]!, checks: ["evidence/timeout"], tests: [{ check: "evidence/timeout", test: "rejects with MCP_TIMEOUT" }] },
    ];
    const late = { title: "never hands a late answer, arriving after its call timed out, to a newer call", status: "fail" as const, message: "需要先完成 TODO(timeout)：挂起：callTool(late, 30 ms) 再也不会完成" };
    const checks = [check("evidence/out-of-order", "pass"), check("rubric/id-matching", "fail", { tests: [late] }), check("evidence/timeout", "fail", { tests: [{ title: "rejects with MCP_TIMEOUT, cleans up", status: "fail", message: "hung" }] })];
    // The learner finished TODO 1 and deleted its markers; timeout's markers are still there.
    const progress = todoProgress(owned, checks, "zh", new Set(["timeout"]));
    expect(progress[0]).toMatchObject({ state: "done", waitingOn: ["timeout"], failing: [] });
    expect(progress[1]).toMatchObject({ state: "not-yet", failing: ["rubric/id-matching", "evidence/timeout"] });
    const text = renderProgress(progress, "zh").join("\n");
    expect(text).toContain("✔ 1. TODO(map)");
    expect(text).toContain("这一项的测试还需要先完成 TODO(timeout)");
    expect(text).toContain("下一步：TODO(timeout)");
    // Once timeout's markers are gone too, the same failure makes timeout broken, not TODO 1.
    expect(todoProgress(owned, checks, "zh", new Set()).map((p) => p.state)).toEqual(["done", "broken"]);
  });

  it("charges a failed clean shutdown to the close TODO in any test, and a test's other failures to its owner", () => {
    const owned: TodoDef[] = [
      { ...todos[0]!, checks: ["evidence/out-of-order"], tests: [{ check: "evidence/out-of-order", test: "matches" }] },
      { tag: "close", title: { zh: "关闭", en: "close" }, section: "7.10", lesson: `${L}#close`, checks: ["probe/orphans"], blame: ["^hung: close\\(\\)", "close\\(\\) resolved but process"] },
    ];
    const fail = (message: string) => check("evidence/out-of-order", "fail", { tests: [{ title: "matches a fast answer", status: "fail", message }] });
    const closeFailed = todoProgress(owned, [fail("close() resolved but process(es) 12 are still alive"), check("probe/orphans", "pass")], "en", new Set(["close"]));
    expect(closeFailed.map((p) => [p.state, p.waitingOn])).toEqual([["done", ["close"]], ["not-yet", []]]);
    expect(closeFailed[1]!.charged).toEqual([{ check: "evidence/out-of-order", test: "matches a fast answer" }]);
    const own = todoProgress(owned, [fail("hung: the slow call never settled"), check("probe/orphans", "pass")], "en", new Set());
    expect(own.map((p) => p.state)).toEqual(["broken", "done"]);
  });

  it("names a TODO by its English name in English reports", () => {
    const named: TodoDef[] = [{ ...todos[0]!, tag: "实现 MCP pending request map", name: "pending-map" }];
    const text = renderProgress(todoProgress(named, [check("evidence/out-of-order", "fail")], "en", undefined), "en").join("\n");
    expect(text).toContain("TODO(pending-map)");
    expect(text).not.toMatch(/[\u4e00-\u9fff]/);
  });

  it("names the first broken TODO as the next step, before any that is not started", () => {
    const checks = [check("evidence/out-of-order", "pass"), check("evidence/timeout", "fail"), check("rubric/lifecycle", "fail"), check("evidence/server-exit", "fail")];
    const text = renderProgress(todoProgress(todos, checks, "zh", new Set(["exit"])), "zh").join("\n");
    expect(text).toContain("下一步：TODO(timeout)，课程 7.5 节 lessons/33-mcp-lite/README.md#timeout");
  });

  it("reads the TODO markers still in the submission's source files", () => {
    const temp = makeTempDir("lab33-progress-");
    try {
      mkdirSync(join(temp.dir, "src", "deep"), { recursive: true });
      writeFileSync(join(temp.dir, "src", "a.ts"), "// TODO(map): here\nconst x = 1; // TODO(exit)\n");
      writeFileSync(join(temp.dir, "src", "deep", "b.ts"), "// TODO(timeout)\n");
      writeFileSync(join(temp.dir, "src", "notes.md"), "TODO(framing)\n");
      expect([...todoMarkers(temp.dir)!].sort()).toEqual(["exit", "map", "timeout"]);
      expect(todoMarkers(join(temp.dir, "missing"))).toBeUndefined();
    } finally {
      temp.cleanup();
    }
  });
});

describe("wire trace and paths", () => {
  it("prints the first failing test's messages as compact → / ← lines", () => {
    expect(traceLine({ dir: "in", msg: { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { value: "slow" } } } })).toBe(
      '→ #3 tools/call echo {"value":"slow"}',
    );
    expect(traceLine({ dir: "out", msg: { jsonrpc: "2.0", id: 3, error: { code: -32050, message: "quota" } } })).toBe("← #3 error -32050 quota");
    expect(traceLine({ dir: "in", msg: { jsonrpc: "2.0", method: "notifications/initialized" } })).toBe("→ notifications/initialized");
    expect(traceLine({ dir: "out", msg: { raw: "ready" } })).toBe('← (not JSON) "ready"');
    const trace = Array.from({ length: 30 }, (_, i) => ({ dir: "out" as const, msg: { id: i + 1, result: {} } }));
    const failing = check("evidence/timeout", "fail", { tests: [{ title: "t", status: "fail", trace }] });
    const lines = renderTrace([check("evidence/happy-path", "pass"), failing], "en");
    expect(lines[0]).toContain("evidence/timeout › t");
    expect(lines).toContain("… 12 more");
    expect(lines.at(-1)).toBe("← #30 result {}");
  });

  it("maps the grader's private copy to the learner's folder and the English report to the English lesson", () => {
    const submission = join(process.cwd(), "labs", "33-mcp-lite", "starter");
    const text = "timeout at McpClient.call (/work/x/.grade/g-Ab12/submission/src/mcp-client.ts:40:12); file:///tmp/lab33-grade-x/submission/src/pending.ts:3";
    expect(mapPaths(text, submission)).toBe(
      "timeout at McpClient.call (labs/33-mcp-lite/starter/src/mcp-client.ts:40:12); labs/33-mcp-lite/starter/src/pending.ts:3",
    );
    expect(lessonLink(`${L}#settle`, "en")).toBe("lessons/33-mcp-lite/README.en.md#settle");
    expect(lessonLink(`${L}#settle`, "zh")).toBe(`${L}#settle`);
  });

  it("ends the text report with the trace and the TODO list, with leak locations in the learner's files", () => {
    const submission = join(process.cwd(), "labs", "33-mcp-lite", "starter");
    const result: GradeResult = {
      version: 1, lab: "33-mcp-lite", status: "fail", score: 0, maxScore: 20, bonus: { score: 0, maxScore: 0 }, seed: 1, lang: "en",
      submission, startedAt: "", durationMs: 0,
      checks: [check("evidence/timeout", "fail", {
        hint: "h", lesson: `${L}#timeout`,
        tests: [{ title: "t", status: "fail", message: "after close(), the client still holds 1 timer(s): timeout from at f (/r/.grade/g-1/submission/src/a.ts:9:1)", trace: [{ dir: "in", msg: { id: 1, method: "initialize" } }] }],
      })],
      todos: todoProgress(todos, [check("evidence/timeout", "fail")], "en", new Set(["timeout"])),
    };
    const text = renderText(result, "en");
    expect(text).toContain("timeout at f (labs/33-mcp-lite/starter/src/a.ts:9:1)");
    expect(text).toContain("reread: lessons/33-mcp-lite/README.en.md#timeout");
    expect(text.indexOf("→ #1 initialize")).toBeLessThan(text.indexOf("Progress by TODO"));
    expect(text).toContain("next: TODO(timeout)");
  });
});
