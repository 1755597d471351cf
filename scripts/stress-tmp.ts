// The temp dir of a `corpus:stress` run: one of its own, marked with the process that owns it,
// so that a run stopped too hard to tidy up (SIGKILL, the machine's session ending) leaves
// nothing for long: the next run removes every such dir whose owner is gone.

import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { procInfo } from "../grader/procs.ts";
import { removeTree } from "../grader/safe-fs.mjs";

export const STRESS_TMP_PREFIX = "lab33-stress-tmp-";
const OWNER_FILE = "owner";
/** A dir that names no owner is left alone until it has not changed for this long, in ms: a run
 *  made before owners were recorded changes its dir with every grade it starts. */
export const UNOWNED_STALE_MS = 15 * 60_000;

// A process's start time, in clock ticks since boot (it tells a reused pid apart where /proc
// has it; elsewhere the pid alone is compared).
function startedAt(pid: number): string | undefined {
  const ticks = procInfo(pid)?.startTicks;
  return ticks === undefined || Number.isNaN(ticks) ? undefined : String(ticks);
}

function alive(owner: string): boolean {
  const [pidText, started] = owner.trim().split(" ");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const now = startedAt(pid);
  return started === undefined || started === "" || now === undefined || now === started;
}

/** Makes this run's temp dir under `parent`, marked as this process's. */
export function ownTempDir(parent: string): string {
  const dir = mkdtempSync(join(parent, STRESS_TMP_PREFIX));
  writeFileSync(join(dir, OWNER_FILE), `${process.pid} ${startedAt(process.pid) ?? ""}\n`);
  return dir;
}

/**
 * Removes the temp dirs of earlier runs under `parent` whose owner is no longer running, and
 * those that name no owner (made before owners were recorded, or cut short while being made)
 * and have not changed for `unownedStaleMs`. Returns the dirs removed, and those that could
 * not be, with why.
 */
export function sweepStale(parent: string, unownedStaleMs = UNOWNED_STALE_MS): { removed: string[]; failed: string[] } {
  const removed: string[] = [];
  const failed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent).filter((name) => name.startsWith(STRESS_TMP_PREFIX));
  } catch {
    return { removed, failed };
  }
  for (const name of names) {
    const dir = join(parent, name);
    let owner = "";
    try {
      owner = readFileSync(join(dir, OWNER_FILE), "utf8");
    } catch {
      // no owner recorded
    }
    if (owner !== "" && alive(owner)) continue;
    if (owner === "" && !unchangedFor(dir, unownedStaleMs)) continue;
    const left = removeTree(dir);
    if (left) failed.push(`${dir}: ${left}`);
    else removed.push(dir);
  }
  return { removed, failed };
}

function unchangedFor(dir: string, ms: number): boolean {
  try {
    return Date.now() - statSync(dir).mtimeMs > ms;
  } catch {
    return false;
  }
}
