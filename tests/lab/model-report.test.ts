// The model probe's report: a drawn sequence is shown with its shrunk length and failing step;
// a finding made after every sequence conformed (the drain check) says so instead.

import { describe, expect, it } from "vitest";
import { formatReport, type Finding } from "../../labs/33-mcp-lite/probes/model/report.ts";

const base: Finding = { dimension: "rubric/lifecycle", message: "M", steps: ["A", "B"], log: [] };

describe("the model probe's report", () => {
  it("names a shrunk sequence's length and failing step, and the seed to replay", () => {
    const report = formatReport(base, 42);
    expect(report).toContain("2");
    expect(report).toMatch(/▶ 2\. B/);
    expect(report).toContain("--seed 42");
    expect(report).not.toContain("全部结束之后");
  });

  it("says a finding after every sequence conformed is no sequence of its own", () => {
    const report = formatReport({ ...base, steps: ["all closed"], afterRuns: true }, 42);
    expect(report).toContain("全部结束之后");
    expect(report).not.toContain("缩减");
    expect(report).toMatch(/▶ 1\. all closed/);
  });
});
