// The grader's guards that no corpus entry reaches on its own: the overall deadline stops a
// run, says which tests were still running, and leaves nothing behind. (`.only` is not a
// guard: the grader runs only its own test files, with vitest's allowOnly off; the corpus
// entry only-in-comment grades pass.)

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { grade, ROOT, TOKEN_ENV } from "../../grader/grade.ts";
import { withEnvToken } from "../../grader/procs.ts";
import { GRADE_TEST_TIMEOUT_MS } from "./pool.ts";

const lab = join(ROOT, "labs", "33-mcp-lite");
const work = mkdtempSync(join(tmpdir(), "lab33-guards-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.concurrent("grader guards", () => {
  it("stops a run at the overall deadline, names the tests still running, and leaves no process", { timeout: GRADE_TEST_TIMEOUT_MS }, async () => {
    let token = "";
    // A client whose calls never settle while it keeps a timer running: the hang detectors
    // cannot call it still (a timer could still settle them), so only the deadline ends it.
    const dir = join(work, "busy-never-settles");
    cpSync(join(lab, "corpus", "never-settles"), dir, { recursive: true });
    const entry = join(dir, "src", "mcp-client.ts");
    writeFileSync(entry, readFileSync(entry, "utf8").replace("initialize(): Promise<never> {", "initialize(): Promise<never> {\n    setInterval(() => {}, 50);"));
    const result = await grade({
      submission: dir,
      lang: "en",
      seed: 1,
      homework: false,
      // Long enough for vitest to start its tests on a loaded machine (at 4 s none had started
      // under the full suite's load); the hang detectors wait past it, so the tests still run.
      deadlineMs: 12_000,
      hangMs: 60_000,
      onRun: (info) => (token = info.token),
    });
    expect(result.status).toBe("error");
    expect(result.message).toMatch(/overall deadline of 12000 ms; still running then: .*(evidence|rubric)\//);
    expect(withEnvToken(TOKEN_ENV, token)).toEqual([]);
  });
});
