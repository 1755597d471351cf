// Exercism's results.json v3 as the interface states it (exercism.org/docs/building/tooling/
// test-runners/interface): "error" only when every test errored (or none could run), "fail"
// when at least one test failed or errored, and a top-level message of at most 65 535 bytes
// when its characters take several bytes each. The image's user and base are checked in the
// Dockerfile; dist-runners.test.ts runs the runner itself.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../grader/grade.ts";
import type { GradeResult } from "../../grader/grade-result.ts";
import { cutUtf8, EXERCISM_MESSAGE_MAX_BYTES } from "../../grader/report/exercism.ts";
import { render } from "../../grader/report/index.ts";

type Check = GradeResult["checks"][number];
const check = (id: string, status: Check["status"], kind: Check["kind"] = "evidence"): Check => ({
  id, kind, status, score: status === "pass" ? 10 : 0, maxScore: 10, message: `${id} ${status}`, title: id, standard: "", deduction: "", tests: [{ title: "t", status: status === "pass" ? "pass" : "fail" }],
});
const result = (status: GradeResult["status"], checks: Check[], message?: string): GradeResult => ({
  version: 1, lab: "33-mcp-lite", status, score: 0, maxScore: 20, bonus: { score: 0, maxScore: 2 }, seed: 3, lang: "zh", submission: "", startedAt: "", durationMs: 1, checks, ...(message ? { message } : {}),
});

describe("Exercism results (--format exercism)", () => {
  it("is error with a message when every test errored, and still lists the tests", () => {
    const out = JSON.parse(render(result("error", [check("evidence/happy-path", "error"), check("probe/orphans", "error"), check("homework/stress-100", "pass", "homework")], "截止时间已到"), "exercism"));
    expect(out.status).toBe("error");
    expect(out.message).toBe("截止时间已到");
    expect(out.tests.map((t: { status: string }) => t.status)).toEqual(["error", "error"]);
  });

  it("says which checks errored when the result has no message of its own", () => {
    const out = JSON.parse(render(result("error", [check("evidence/happy-path", "error"), check("rubric/process", "error")]), "exercism"));
    expect(out).toMatchObject({ status: "error", message: "evidence/happy-path: evidence/happy-path error\nrubric/process: rubric/process error" });
  });

  it("is fail, without a message, when one test errored and another failed or passed", () => {
    for (const other of ["fail", "pass"] as const) {
      const out = JSON.parse(render(result("error", [check("evidence/happy-path", other), check("rubric/process", "error")], "deadline"), "exercism"));
      expect(out.status).toBe("fail");
      expect(out.message).toBeUndefined();
    }
  });

  it("caps the top-level message at 65 535 UTF-8 bytes without cutting a character", () => {
    const long = "评".repeat(30_000); // 90 000 bytes, 30 000 UTF-16 units
    const out = JSON.parse(render(result("error", [check("evidence/happy-path", "error")].map((c) => ({ ...c, tests: [] })), long), "exercism"));
    expect(Buffer.byteLength(out.message, "utf8")).toBeLessThanOrEqual(EXERCISM_MESSAGE_MAX_BYTES);
    expect(out.message).toBe("评".repeat(Math.floor(EXERCISM_MESSAGE_MAX_BYTES / 3)));
    expect(cutUtf8("ab评", 4)).toBe("ab");
    expect(cutUtf8("ab评", 5)).toBe("ab评");
    expect(cutUtf8("a😀", 4)).toBe("a");
    expect(cutUtf8("short", 10)).toBe("short");
  });
});

describe("Exercism image (grader/platforms/exercism/Dockerfile)", () => {
  const dockerfile = readFileSync(join(ROOT, "grader/platforms/exercism/Dockerfile"), "utf8");

  it("runs as an unprivileged user from an exactly pinned base, with the convention's entry point", () => {
    const from = /^FROM (\S+)$/m.exec(dockerfile)?.[1] ?? "";
    // An exact release (x.y.z) or a digest, never a moving tag such as node:22-bookworm-slim.
    expect(from).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+-slim$|@sha256:[0-9a-f]{64}$/);
    const user = [...dockerfile.matchAll(/^USER (\S+)$/gm)].at(-1)?.[1];
    expect(user).toBeDefined();
    expect(["root", "0"]).not.toContain(user);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/opt\/test-runner\/bin\/run\.sh"\]$/m);
    expect(dockerfile).toContain("ln -s ../grader/platforms/exercism/run.sh bin/run.sh");
  });
});
