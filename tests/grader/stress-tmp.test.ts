// The temp dirs of `npm run corpus:stress` (scripts/stress-tmp.ts): a run stopped too hard to
// remove its own leaves it for the next run to remove, and no run removes one still in use.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ownTempDir, STRESS_TMP_PREFIX, sweepStale } from "../../scripts/stress-tmp.ts";

let parent: string;
beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), "stress-tmp-test-"));
});
afterEach(() => rmSync(parent, { recursive: true, force: true }));

// A pid that is no longer running: a process that has exited and been reaped.
function deadPid(): number {
  const run = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(run.stdout);
}

function runDir(name: string, owner?: string, ageMs = 0): string {
  const dir = join(parent, `${STRESS_TMP_PREFIX}${name}`);
  mkdirSync(join(dir, "lab-grade-x", "g"), { recursive: true });
  writeFileSync(join(dir, "lab-grade-x", "g", "file"), "left over");
  if (owner !== undefined) writeFileSync(join(dir, "owner"), owner);
  if (ageMs > 0) utimesSync(dir, new Date(Date.now() - ageMs), new Date(Date.now() - ageMs));
  return dir;
}

it("marks its own dir with this process, and never removes a dir whose owner still runs", () => {
  const own = ownTempDir(parent);
  expect(readFileSync(join(own, "owner"), "utf8")).toMatch(new RegExp(`^${process.pid} `));
  expect(sweepStale(parent)).toEqual({ removed: [], failed: [] });
  expect(existsSync(own)).toBe(true);
});

it("removes the dirs of runs that are gone, and leaves other folders alone", () => {
  const gone = runDir("gone", `${deadPid()} 1\n`);
  const other = join(parent, "lab33-stress-abc");
  mkdirSync(other);
  expect(sweepStale(parent)).toEqual({ removed: [gone], failed: [] });
  expect(existsSync(gone)).toBe(false);
  expect(existsSync(other)).toBe(true);
});

it.skipIf(!existsSync("/proc/self/stat"))("removes the dir of a run whose pid another process has since taken", () => {
  // This process's pid with another start time: the run that owned it is gone, the pid reused.
  const reused = runDir("reused", `${process.pid} 1\n`);
  expect(sweepStale(parent).removed).toEqual([reused]);
});

it("removes a dir that names no owner only once it has not changed for a while", () => {
  const fresh = runDir("fresh");
  const old = runDir("old", undefined, 60 * 60_000);
  expect(sweepStale(parent).removed).toEqual([old]);
  expect(existsSync(fresh)).toBe(true);
  expect(existsSync(old)).toBe(false);
});

it("finds nothing to do where the parent does not exist", () => {
  expect(sweepStale(join(parent, "missing"))).toEqual({ removed: [], failed: [] });
});
