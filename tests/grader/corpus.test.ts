// The grader proves itself: every known-bad submission in labs/33-mcp-lite/corpus is
// caught by the check named for its defect, passes what it must pass (the happy path
// wherever the client still works), gets the overall status it must get, and leaves no
// process behind. Entries are graded concurrently in a bounded pool.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listCorpus, materialize } from "../../grader/corpus.ts";
import { grade, loadManifest, TOKEN_ENV } from "../../grader/grade.ts";
import { commandLine, isLive, listProcs, withEnvToken } from "../../grader/procs.ts";
import { GRADE_POOL_SIZE, GRADE_TEST_TIMEOUT_MS, limiter } from "./pool.ts";

const { manifest, labDir } = await loadManifest("33-mcp-lite");
/** The message of a test that fails only because it leans on another TODO (lang "en"). */
const NEEDS = /^needs TODO\([^)]+\) first: /;
const entries = listCorpus(labDir);
const work = mkdtempSync(join(tmpdir(), "lab33-corpus-"));
const pool = limiter(GRADE_POOL_SIZE);
afterAll(() => rmSync(work, { recursive: true, force: true }));

// Live processes that carry the grade's token or name one of its folders on their command line.
function leftoversOf(run: { token: string; gradeDir: string; privateDir: string }): string[] {
  const byToken = withEnvToken(TOKEN_ENV, run.token).map((p) => p.pid);
  const byPath = listProcs()
    .filter((p) => isLive(p) && p.pid !== process.pid)
    .filter((p) => {
      const cmd = commandLine(p.pid, 8192);
      return cmd.includes(run.privateDir) || cmd.includes(run.gradeDir);
    })
    .map((p) => p.pid);
  return [...new Set([...byToken, ...byPath])].map((pid) => `${pid} ${commandLine(pid)}`);
}

describe("corpus", () => {
  it("has at least one entry per evidence test and per rubric dimension, and the orphan probe", () => {
    const caught = new Set(entries.flatMap((e) => e.expected.mustFail));
    for (const check of manifest.checks) expect([...caught], check.id).toContain(check.id);
  });
});

describe.concurrent("corpus entries", () => {
  for (const entry of entries) {
    it(`${entry.name}: ${entry.expected.defect}`, { timeout: GRADE_TEST_TIMEOUT_MS }, async () => {
      const dir = materialize(entry, join(labDir, manifest.solution), work);
      let run: { token: string; gradeDir: string; privateDir: string } | undefined;
      const homework = entry.expected.homework === true;
      const result = await pool(() => grade({ submission: dir, seed: 3, lang: "en", homework, onRun: (info) => (run = info) }));
      const byId = Object.fromEntries(result.checks.map((c) => [c.id, c.status]));
      expect(result.status, result.message).toBe(entry.expected.status);
      for (const id of entry.expected.mustFail) expect(byId[id], `${id} must not pass`).not.toBe("pass");
      for (const id of entry.expected.mustPass) expect(byId[id], `${id} must pass`).toBe("pass");
      for (const text of entry.expected.messageIncludes ?? []) expect(result.message ?? "").toContain(text);
      if (entry.expected.mustPassOthers ?? entry.mutations !== undefined) {
        // One defect, charged to its own dimensions: every other graded check passes, or
        // fails only with tests that say which other TODO they need first.
        const blamed = result.checks
          .filter((c) => c.kind !== "homework" && c.status !== "pass" && !entry.expected.mustFail.includes(c.id))
          .filter((c) => c.status === "error" || c.tests.filter((t) => t.status === "fail").some((t) => !NEEDS.test(t.message ?? "")))
          .map((c) => `${c.id}: ${c.message}`);
        expect(blamed, "checks this single-defect entry must not fail").toEqual([]);
      }
      // Whatever the submission did, nothing the grade started is still running.
      expect(leftoversOf(run!)).toEqual([]);
    });
  }
});
