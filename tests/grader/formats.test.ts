// The report formats, from one hand-made result: each says the same verdict in its own
// shape, the markdown draws the failed evidence test's real messages, and nothing breaks
// the JSON or XML it is embedded in.

import { describe, expect, it } from "vitest";
import { render } from "../../grader/report/index.ts";
import { renderText } from "../../grader/report/text.ts";
import type { GradeResult } from "../../grader/result.ts";

function sample(status: GradeResult["status"] = "fail"): GradeResult {
  return {
    version: 1,
    lab: "33-mcp-lite",
    status,
    score: 10,
    maxScore: 18,
    bonus: { score: 2, maxScore: 2 },
    seed: 42,
    lang: "en",
    ...(status === "error" ? { message: "type check failed: src/mcp-client.ts:6:12 TS1005: ':' expected." } : {}),
    submission: "/tmp/x",
    startedAt: "2025-01-01T00:00:00.000Z",
    durationMs: 1234,
    checks: [
      { id: "evidence/happy-path", kind: "evidence", status: "pass", score: 10, maxScore: 10, message: "all 1 tests passed", title: "Happy path", standard: "s", deduction: "d", tests: [{ title: "works", status: "pass", durationMs: 5 }] },
      {
        id: "evidence/out-of-order", kind: "evidence", status: "fail", score: 0, maxScore: 8, message: "1 of 1 tests failed",
        hint: "Reread the id-matching section <Map>", lesson: "lessons/33-mcp-lite/README.md#id-matching", title: "Out of order", standard: "s", deduction: "d",
        tests: [{
          title: "matches \"fast\" & slow", status: "fail", message: "hung: slow call never settled; a <b> | c",
          trace: [
            { dir: "in", msg: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { value: "slow" } } } },
            { dir: "in", msg: { jsonrpc: "2.0", method: "notifications/initialized" } },
            { dir: "out", msg: { jsonrpc: "2.0", id: 2, error: { code: -32000, message: "boom" } } },
            { dir: "out", msg: { raw: "not json; #1" } },
          ],
        }],
      },
      { id: "homework/stress-100", kind: "homework", status: "pass", score: 2, maxScore: 2, message: "ok", title: "stress", standard: "", deduction: "", tests: [{ title: "t", status: "pass" }] },
    ],
  };
}

describe("report formats", () => {
  it("prints the rubric-shaped text report with the seed, each failed test's reason, the hint and the lesson section", () => {
    const text = renderText(sample());
    expect(text).toContain("Seed (reproduce with --seed): 42");
    expect(text).toContain("✘ evidence/out-of-order");
    expect(text).toContain("why: hung: slow call never settled");
    // English reports link the English companion of the lesson (same anchors).
    expect(text).toContain("reread: lessons/33-mcp-lite/README.en.md#id-matching");
    expect(renderText({ ...sample(), lang: "zh" })).toContain("随机种子");
  });

  it("renders the native result as JSON with the contract's fields", () => {
    const parsed = JSON.parse(render(sample(), "json"));
    expect(parsed).toMatchObject({ lab: "33-mcp-lite", status: "fail", score: 10, maxScore: 18, seed: 42 });
    expect(parsed.checks[1]).toMatchObject({ id: "evidence/out-of-order", status: "fail", score: 0, maxScore: 8, hint: expect.any(String) });
  });

  it("draws a Mermaid sequence diagram of the failed evidence test's real messages in markdown", () => {
    const md = render(sample(), "markdown");
    expect(md).toContain("```mermaid\nsequenceDiagram");
    expect(md).toContain("C->>S: ＃2 tools/call echo {'value':'slow'}");
    expect(md).toContain("C-)S: notifications/initialized");
    expect(md).toContain("S-->>C: ＃2 error -32000 boom");
    expect(md).toContain("S-->>C: raw not json, ＃1");
    expect(md).toContain("Note over C: hung: slow call never settled, a ‹b› | c");
    expect(md).toContain("| `evidence/out-of-order` Out of order | ❌ fail | 0/8 |");
  });

  it("writes Gradescope results.json with one test per check and the bonus in the total", () => {
    const gs = JSON.parse(render(sample(), "gradescope"));
    expect(gs.score).toBe(12);
    expect(gs.tests).toHaveLength(3);
    expect(gs.tests[1]).toMatchObject({ score: 0, max_score: 8, status: "failed" });
    expect(gs.output).toContain("seed 42");
  });

  it("writes Exercism results v3, with a could-not-grade result as status error and its message", () => {
    const ex = JSON.parse(render(sample(), "exercism"));
    expect(ex).toMatchObject({ version: 3, status: "fail" });
    expect(ex.tests[1]).toMatchObject({ status: "fail", message: expect.stringContaining("1 of 1 tests failed") });
    const error = JSON.parse(render(sample("error"), "exercism"));
    expect(error).toMatchObject({ version: 3, status: "error", message: expect.stringContaining("src/mcp-client.ts:6") });
  });

  it("writes JUnit XML with escaped failure text and the seed as a property", () => {
    const xml = render(sample(), "junit");
    expect(xml).toContain('<property name="seed" value="42"/>');
    expect(xml).toContain('name="matches &quot;fast&quot; &amp; slow"');
    expect(xml).toContain("<failure message=\"hung: slow call never settled; a &lt;b&gt; | c\">");
    expect(xml).not.toMatch(/<b>/);
  });
});
