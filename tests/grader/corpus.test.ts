// The grader proves itself: every known-bad submission in labs/33-mcp-lite/corpus is
// caught by the check named for its defect, passes what it must pass (the happy path
// wherever the client still works), gets the overall status it must get, and leaves no
// process behind. Entries are graded concurrently in a bounded pool. The hostile entries
// (issue 9) must also leave the project's files exactly as they were and nothing of theirs
// alive or on disk after their grade; the two that would harm the machine outside the OS
// sandbox are graded only where it is available.

import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listCorpus, materialize, memoryGroupAvailable, missedExpectations } from "../../grader/corpus.ts";
import { grade, loadManifest, ROOT, TOKEN_ENV } from "../../grader/grade.ts";
import { commandLine, isLive, listProcs, withEnvToken } from "../../grader/procs.ts";
import { sandboxSupport } from "../../grader/sandbox/index.ts";
import { GRADE_POOL_SIZE, GRADE_TEST_TIMEOUT_MS, limiter } from "./pool.ts";

const { manifest, labDir } = await loadManifest("33-mcp-lite");
const entries = listCorpus(labDir);
const work = mkdtempSync(join(tmpdir(), "lab33-corpus-"));
const pool = limiter(GRADE_POOL_SIZE);
const sandboxed = sandboxSupport().kind !== "none";
const memoryGroup = memoryGroupAvailable();
afterAll(() => rmSync(work, { recursive: true, force: true }));

// Folders of the project whose files no grade may change (what the suite itself writes, such
// as coverage and bench results, is left out).
const WATCHED = ["labs", "grader", "fixtures", "tests", "lessons", "scripts", "package.json", "tsconfig.json"];
function treeSnapshot(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (path: string) => {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const name of readdirSync(path).sort()) if (name !== "node_modules") walk(join(path, name));
    } else if (st.isFile()) {
      // The mode too: a grade that chmods through a link changes no byte.
      files.set(relative(ROOT, path), `${(st.mode & 0o7777).toString(8)} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`);
    }
  };
  for (const top of WATCHED) walk(join(ROOT, top));
  return files;
}
// The files added, removed or changed between two snapshots.
function changed(a: Map<string, string>, b: Map<string, string>): string[] {
  const names = new Set([...a.keys(), ...b.keys()]);
  return [...names].filter((name) => a.get(name) !== b.get(name)).sort();
}
let before = new Map<string, string>();
beforeAll(() => {
  before = treeSnapshot();
});

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

// Processes the hostile entries start carry one of these markers (none keeps the grade's env or folders).
const MARKERS = ["lab-corpus-", "sleep 3131"];
function markedProcesses(): string[] {
  return listProcs()
    .filter((p) => isLive(p) && p.pid !== process.pid)
    .map((p) => `${p.pid} ${commandLine(p.pid, 4096)}`)
    .filter((line) => MARKERS.some((m) => line.includes(m)));
}

// System V objects the sysv-ipc entry makes (a 31313-byte segment, queues of mode 0601).
function markedIpc(): string[] {
  const read = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").slice(1) : []);
  const shm = read("/proc/sysvipc/shm").filter((line) => line.trim().split(/\s+/)[3] === "31313");
  const msg = read("/proc/sysvipc/msg").filter((line) => line.trim().split(/\s+/)[2] === "601");
  return [...shm, ...msg];
}

describe("corpus", () => {
  it("has at least one entry per evidence test and per rubric dimension, and the orphan probe", () => {
    const caught = new Set(entries.flatMap((e) => e.expected.mustFail));
    for (const check of manifest.checks) expect([...caught], check.id).toContain(check.id);
  });
});

// Each entry graded as the grader runs by default (the OS sandbox where the machine has one),
// and entries marked `sandboxOff` again with --sandbox off.
const runs = entries.flatMap((entry) => [{ entry, sandbox: "auto" as const }, ...(entry.expected.sandboxOff ? [{ entry, sandbox: "off" as const }] : [])]);

describe.concurrent("corpus entries", () => {
  for (const { entry, sandbox } of runs) {
    const skip = (entry.expected.needsSandbox === true && !sandboxed) || (entry.expected.needsMemoryGroup === true && !memoryGroup);
    const mode = sandbox === "off" ? " (--sandbox off)" : "";
    it.skipIf(skip)(`${entry.name}${mode}: ${entry.expected.defect}`, { timeout: GRADE_TEST_TIMEOUT_MS }, async () => {
      const dir = materialize(entry, join(labDir, manifest.solution), join(work, sandbox));
      let run: { token: string; gradeDir: string; privateDir: string } | undefined;
      const homework = entry.expected.homework === true;
      const result = await pool(() =>
        grade({ submission: dir, seed: 3, lang: "en", homework, sandbox, deadlineMs: entry.expected.deadlineMs, memoryMb: entry.expected.memoryMb, onRun: (info) => (run = info) }),
      );
      // Status, checks that must fail or pass, messages, every check listed, an error scoring
      // nothing, a single defect charged to its own dimensions (grader/corpus.ts).
      expect(missedExpectations(entry, result, sandbox, manifest.checks.map((c) => c.id))).toEqual([]);
      // Whatever the submission did, nothing the grade started is still running, and its
      // private folder is gone (locked folders included).
      expect(leftoversOf(run!)).toEqual([]);
      expect(existsSync(run!.privateDir), run!.privateDir).toBe(false);
    });
  }
});

describe("after the hostile grades", () => {
  it("left the project's files unchanged, nothing they started alive, and nothing they wrote in the temp dir", () => {
    expect(changed(before, treeSnapshot())).toEqual([]);
    expect(markedProcesses()).toEqual([]);
    expect(markedIpc()).toEqual([]);
    // Only the sandbox's private /tmp makes what a submission wrote disappear (without it,
    // borrow-tmp-copy leaves its copy: removed here, not asserted).
    const written = readdirSync(tmpdir()).filter((name) => name.startsWith("lab-corpus-"));
    if (sandboxed) expect(written).toEqual([]);
    else for (const name of written) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  });
});
