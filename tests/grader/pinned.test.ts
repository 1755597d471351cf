// The grader against the lab's own folders: the reference solution passes every check and
// the starter fails exactly the checks lab.ts pins for it, with the happy path passing; in
// the OS sandbox (where the machine has one) and with --sandbox off alike.

import { describe, expect, it } from "vitest";
import { grade, loadManifest } from "../../grader/grade.ts";
import type { SandboxMode } from "../../grader/sandbox/index.ts";
import { GRADE_TEST_TIMEOUT_MS } from "./pool.ts";

const { manifest, labDir } = await loadManifest("33-mcp-lite");

function statuses(checks: Array<{ id: string; kind: string; status: string }>): Record<string, string> {
  return Object.fromEntries(checks.filter((c) => c.kind !== "homework").map((c) => [c.id, c.status]));
}

describe.concurrent.for<SandboxMode>(["auto", "off"])("pinned results, --sandbox %s", (sandbox) => {
  it("grades the reference solution pass on every evidence, rubric and orphan check", { timeout: GRADE_TEST_TIMEOUT_MS }, async () => {
    const result = await grade({ submission: `${labDir}/${manifest.solution}`, seed: 11, lang: "en", sandbox });
    expect(statuses(result.checks)).toEqual(manifest.expected.solution);
    expect(result).toMatchObject({ status: "pass", score: result.maxScore, seed: 11, lab: "33-mcp-lite" });
    expect(result.maxScore).toBe(100);
  });

  it("grades the starter fail with the happy path passing, exactly as lab.ts pins it", { timeout: GRADE_TEST_TIMEOUT_MS }, async () => {
    const result = await grade({ seed: 11, lang: "zh", sandbox });
    expect(result.submission).toBe(`${labDir}/${manifest.starter}`);
    expect(statuses(result.checks)).toEqual(manifest.expected.starter);
    expect(result.status).toBe("fail");
    const failed = result.checks.filter((c) => c.status === "fail" && c.kind !== "homework");
    for (const check of failed) {
      expect(check.hint, check.id).toMatch(/重读课程/);
      expect(check.lesson, check.id).toMatch(/^lessons\/33-mcp-lite\/README\.md#/);
    }
    const hung = result.checks.find((c) => c.id === "evidence/timeout")!;
    expect(hung.tests[0]?.message).toMatch(/^挂起：/);
  });
});
