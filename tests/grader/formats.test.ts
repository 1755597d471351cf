// The report formats, from one hand-made result: each says the same verdict in its own
// shape, the markdown draws the failed evidence test's real messages, and nothing breaks
// the JSON or XML it is embedded in.

import { SaxesParser } from "saxes";
import { describe, expect, it } from "vitest";
import { csvCell, gradebookCsv } from "../../grader/batch.ts";
import { render } from "../../grader/report/index.ts";
import { renderText } from "../../grader/report/text.ts";
import type { GradeResult } from "../../grader/grade-result.ts";

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

  it("declares every Gradescope text field plain text, so angle brackets in a hint survive", () => {
    const gs = JSON.parse(render(sample(), "gradescope"));
    // Gradescope's documented values: text, html, simple_format, md, ansi (default simple_format, read as HTML).
    expect(gs).toMatchObject({ output_format: "text", test_output_format: "text", test_name_format: "text" });
    expect(gs.tests[1].output).toContain("<Map>");
    for (const test of gs.tests) expect(Object.keys(test).sort()).toEqual(["max_score", "name", "output", "output_format", "score", "status", "visibility"]);
  });

  it("writes Exercism results v3 with one test per graded check, its status, message and test source", () => {
    const ex = JSON.parse(render(sample(), "exercism"));
    expect(ex).toMatchObject({ version: 3, status: "fail" });
    expect(ex.tests.map((t: { name: string }) => t.name)).toEqual(["evidence/happy-path: Happy path", "evidence/out-of-order: Out of order"]);
    expect(ex.tests[1]).toMatchObject({ status: "fail", message: expect.stringContaining("1 of 1 tests failed") });
    expect(ex.tests[0].message).toBeUndefined();
    // test_code is the describe block's source from the lab's test file, not the test's title.
    expect(ex.tests[1].test_code).toContain('describe("evidence/out-of-order"');
    expect(ex.tests[1].test_code).toContain("labs/33-mcp-lite/tests/evidence/out-of-order.test.ts");
    expect(ex.tests[1].test_code).toMatch(/\bit\(/);
  });

  it("keeps Exercism's top-level error for a run where no test could run, with the message", () => {
    const none = sample("error");
    none.checks = none.checks.map((c) => ({ ...c, status: "error" as const, tests: [] }));
    const error = JSON.parse(render(none, "exercism"));
    expect(error).toEqual({ version: 3, status: "error", message: expect.stringContaining("src/mcp-client.ts:6"), tests: [] });
  });

  it("reports a run that broke part-way to Exercism as fail, keeping the checks that ran", () => {
    const partial = sample("error");
    partial.checks[1] = { ...partial.checks[1]!, status: "error", message: "deadline passed" };
    const ex = JSON.parse(render(partial, "exercism"));
    expect(ex.status).toBe("fail");
    expect(ex.tests.map((t: { status: string }) => t.status)).toEqual(["pass", "error"]);
    expect(ex.tests[1].message).toContain("deadline passed");
  });

  it("writes PrairieLearn results with a 0..1 score and points per check, or gradable false when nothing ran", () => {
    const pl = JSON.parse(render(sample(), "prairielearn"));
    expect(pl).toMatchObject({ gradable: true, score: 10 / 18 });
    expect(pl.score).toBeGreaterThanOrEqual(0);
    expect(pl.score).toBeLessThanOrEqual(1);
    expect(pl.tests[1]).toMatchObject({ name: "evidence/out-of-order", points: 0, max_points: 8, message: expect.stringContaining("Reread the id-matching section <Map>") });
    expect(pl.tests[1].output).toContain("✘ matches \"fast\" & slow");
    const none = sample("error");
    none.checks = none.checks.map((c) => ({ ...c, status: "error" as const, tests: [] }));
    const invalid = JSON.parse(render(none, "prairielearn"));
    expect(invalid).toMatchObject({ gradable: false, format_errors: [expect.stringContaining("src/mcp-client.ts:6")] });
    expect(invalid.score).toBeUndefined();
  });

  it("writes JUnit XML with escaped failure text and the seed as a property", () => {
    const xml = render(sample(), "junit");
    expect(xml).toContain('<property name="seed" value="42"/>');
    expect(xml).toContain('name="matches &quot;fast&quot; &amp; slow"');
    expect(xml).toContain('<failure message="hung: slow call never settled; a &lt;b&gt; | c"');
    expect(xml).not.toMatch(/<b>/);
  });

  it("writes JUnit XML that a strict XML parser accepts, even with --- and control characters in the messages", () => {
    const hostile = sample("error");
    hostile.message = "could not grade --- <!-- x --> \u0000\u0001\u001b[31m ]]> \ud800 end";
    hostile.checks[1]!.tests[0]!.message = "---\u0007 bell <x> & \"q\" \u000b";
    hostile.checks[1]!.tests[0]!.title = "title with -- and \u0008";
    const xml = render(hostile, "junit");
    const doc = parseStrict(xml);
    expect(doc.errors).toEqual([]);
    expect(doc.text.join("")).toContain("---");
  });

  it("puts counts and time on every JUnit testsuite and the properties inside it, as the schema does", () => {
    const doc = parseStrict(render(sample(), "junit"));
    expect(doc.errors).toEqual([]);
    const suites = doc.elements.filter((e) => e.name === "testsuite");
    expect(suites.map((s) => s.attributes.name)).toEqual(["33-mcp-lite evidence", "33-mcp-lite homework"]);
    // evidence: "works" passes, "matches …" fails → 2 tests, 1 failure.
    expect(suites[0]!.attributes).toMatchObject({ tests: "2", failures: "1", errors: "0", skipped: "0", time: "0.005" });
    expect(suites[1]!.attributes).toMatchObject({ tests: "1", failures: "0", errors: "0", skipped: "0" });
    for (const key of ["tests", "failures", "errors", "skipped", "time"]) expect(Number.isNaN(Number(suites[0]!.attributes[key]))).toBe(false);
    expect(doc.elements.find((e) => e.name === "testsuites")!.attributes).toMatchObject({ tests: "3", failures: "1" });
    // <properties> is the first child of each <testsuite>, never of <testsuites>.
    expect(doc.elements.filter((e) => e.name === "properties").map((e) => e.parent)).toEqual(["testsuite", "testsuite"]);
    expect(doc.firstChildOf.get("testsuite")).toBe("properties");
  });

  it("adds a JUnit case for a check that failed without a failing test of its own", () => {
    const result = sample();
    result.checks.push({ id: "probe/orphans", kind: "probe", status: "fail", score: 0, maxScore: 8, message: "pid 123 alive after close()", title: "Orphans", standard: "", deduction: "", tests: [] });
    const doc = parseStrict(render(result, "junit"));
    const probe = doc.elements.find((e) => e.name === "testsuite" && e.attributes.name === "33-mcp-lite probe")!;
    expect(probe.attributes).toMatchObject({ tests: "1", failures: "1" });
    expect(render(result, "junit")).toContain('<failure message="pid 123 alive after close()"');
  });
});

describe("gradebook CSV", () => {
  const result = (status: GradeResult["status"], score: number, message?: string): GradeResult => ({ ...sample(status), score, ...(message ? { message } : {}) });

  it("has the student id in its own column, total, bonus and one points column per check", () => {
    const csv = gradebookCsv(["evidence/happy-path", "evidence/out-of-order"], [{ name: "lab33-alice", result: result("fail", 10) }], "^lab33-(.+)$");
    const [header, row] = csv.split("\r\n");
    expect(header).toBe("student,submission,status,total,max,bonus,bonusMax,evidence/happy-path,evidence/out-of-order,homework/stress-100,seed,durationMs,message");
    expect(row).toBe("alice,lab33-alice,fail,10,18,2,2,10,0,2,42,1234,");
    expect(csv.endsWith("\r\n")).toBe(true);
  });

  it("quotes commas, quotes and line breaks and defuses cells a spreadsheet would run as formulas", () => {
    expect(csvCell('a,"b"\nc')).toBe('"a,""b""\nc"');
    expect(csvCell("=HYPERLINK(1)")).toBe("'=HYPERLINK(1)");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    // White space first is skipped by some spreadsheets; full-width signs become formulas too.
    expect(csvCell(" =1+1")).toBe("' =1+1");
    expect(csvCell("\u00a0\n=1")).toBe(`"'\u00a0\n=1"`);
    expect(csvCell("\uFF1D1+1")).toBe("'\uFF1D1+1");
    expect(csvCell("a =1")).toBe("a =1");
    expect(csvCell(-3)).toBe("-3");
    const csv = gradebookCsv([], [{ name: "+bob", result: result("error", 0, "type error, line 6") }]);
    expect(csv.split("\r\n")[1]).toMatch(/^'\+bob,'\+bob,error,0,18,2,2,2,42,1234,"type error, line 6"$/);
  });
});

interface Element { name: string; attributes: Record<string, string>; parent: string | undefined }

// Parses with saxes, a strict XML 1.0 parser: every well-formedness error is collected.
function parseStrict(xml: string): { errors: string[]; elements: Element[]; text: string[]; firstChildOf: Map<string, string> } {
  const parser = new SaxesParser();
  const errors: string[] = [];
  const elements: Element[] = [];
  const text: string[] = [];
  const stack: string[] = [];
  const firstChildOf = new Map<string, string>();
  const seenChild = new Set<number>();
  parser.on("error", (error) => errors.push(error.message));
  parser.on("text", (t) => text.push(t));
  parser.on("opentag", (tag) => {
    const parent = stack.at(-1);
    if (parent !== undefined && !seenChild.has(stack.length)) {
      seenChild.add(stack.length);
      if (!firstChildOf.has(parent)) firstChildOf.set(parent, tag.name);
    }
    elements.push({ name: tag.name, attributes: tag.attributes as Record<string, string>, parent });
    stack.push(tag.name);
    seenChild.delete(stack.length);
  });
  parser.on("closetag", () => {
    seenChild.delete(stack.length);
    stack.pop();
  });
  parser.write(xml).close();
  return { errors, elements, text, firstChildOf };
}
