// A control group of the grade's own, where this machine lets the grader make one (root, or a
// delegated cgroup v2 subtree): every process of the grade (the type check, the import check,
// the test run with its workers, the client hosts and whatever they start) joins it as it
// starts, so the grade as a whole is bounded: memory (`memory.max`, or cgroup v1's
// `memory.limit_in_bytes`, swap included where the kernel accounts it) and processes
// (`pids.max`). Per-process limits alone (RLIMIT_DATA in the sandbox) let a submission's
// children hold 4 GiB each: session 30's red team took one grade to 14.7 GB of a 24 GB machine.
//
// When the kernel ends a process of the group for memory, the group says so (`overLimit`,
// `oomKills()`) and the grade stops with an error that names the limit. Where no group can be
// made (no cgroup file system, no rights, controllers not delegated), `makeGradeGroup` says why
// and the grade runs as before, with the per-process limits.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isPidAlive } from "../procs.ts";

/** Default memory limit of one grade, in MiB (a solution grade peaks near 450 MiB here). */
export const DEFAULT_GRADE_MEMORY_MB = 3072;
/** Processes one grade may have at once: each payload's two users may hold 2048 each (index.ts), and up to three payloads run at once. */
export const GRADE_PIDS = 3 * 2 * 2048;
/** How often the group's out-of-memory count is read while the grade runs, in ms. */
const WATCH_MS = 200;
/** How long remove() waits for the group's last processes to be gone, in ms. */
const REMOVE_WAIT_MS = 3_000;
const PREFIX = "lab-grade-";

export interface GradeGroup {
  /** The memory limit, in bytes. */
  readonly memoryBytes: number;
  /** "v1" or "v2" (for messages and tests). */
  readonly version: "v1" | "v2";
  /** The group's folders (the memory controller's first). */
  readonly dirs: string[];
  /** `command`, joining the group first: a shell that writes its own pid into the group, then becomes the command. */
  wrap(command: string[]): string[];
  /** Processes of the group the kernel has ended for memory so far. */
  oomKills(): number;
  /** Aborted once the kernel has ended a process of the group for memory. */
  readonly overLimit: AbortSignal;
  /** Removes the group once its processes are gone; what went wrong, if anything. */
  remove(): Promise<string | undefined>;
}

/** Where the cgroup file systems are mounted (tests pass a folder of their own). */
export interface CgroupRoots {
  /** cgroup v2's mount point. */
  unified: string;
  /** cgroup v1's mount points, by controller. */
  v1: { memory: string; pids: string };
  /** This process's /proc/self/cgroup text. */
  self: () => string;
}

export const SYSTEM_ROOTS: CgroupRoots = {
  unified: "/sys/fs/cgroup",
  v1: { memory: "/sys/fs/cgroup/memory", pids: "/sys/fs/cgroup/pids" },
  self: () => readFileSync("/proc/self/cgroup", "utf8"),
};

/** Groups this process has made (each grade's name is unique within the process). */
let made = 0;

/** [command, args] joining `group` first (GradeGroup.wrap), or as they are where there is no group. */
export function joinedCommand(group: GradeGroup | undefined, [command, args]: [string, string[]]): [string, string[]] {
  if (!group) return [command, args];
  const [first, ...rest] = group.wrap([command, ...args]);
  return [first!, rest];
}

/** A group for one grade with these limits, or why there is none on this machine. */
export function makeGradeGroup(memoryMb: number, roots: CgroupRoots = SYSTEM_ROOTS): { group: GradeGroup } | { why: string } {
  if (process.platform !== "linux") return { why: `control groups need Linux (this is ${process.platform})` };
  if (!Number.isInteger(memoryMb) || memoryMb <= 0) return { why: "no memory limit asked for" };
  let self: string;
  try {
    self = roots.self();
  } catch (error) {
    return { why: `cannot read this process's control groups: ${(error as Error).message}` };
  }
  const name = `${PREFIX}${process.pid}-${made++}`;
  const bytes = memoryMb * 1024 * 1024;
  const own = (controller: string) => self.split("\n").map((line) => line.split(":")).find((parts) => parts.length >= 3 && parts[1]!.split(",").includes(controller))?.slice(2).join(":");
  const unified = self.split("\n").find((line) => line.startsWith("0::"))?.slice(3);
  const v1Memory = own("memory");
  if (v1Memory !== undefined && existsSync(join(roots.v1.memory, "memory.limit_in_bytes"))) return v1Group(roots, name, bytes, v1Memory, own("pids"));
  if (unified !== undefined && existsSync(join(roots.unified, "cgroup.controllers"))) return v2Group(roots, name, bytes, unified);
  return { why: "no cgroup file system with a memory controller is mounted" };
}

// cgroup v1: a folder of its own in the memory hierarchy (and in the pids one where there is
// one), under this process's own group where that folder is visible, else at the top.
function v1Group(roots: CgroupRoots, name: string, bytes: number, memoryPath: string, pidsPath: string | undefined): { group: GradeGroup } | { why: string } {
  const memoryDir = makeIn(roots.v1.memory, memoryPath, name);
  if ("why" in memoryDir) return memoryDir;
  const dirs = [memoryDir.dir];
  try {
    writeFileSync(join(memoryDir.dir, "memory.limit_in_bytes"), String(bytes));
    // Swap too, where the kernel accounts it (the limit on memory and swap must not be below the one on memory).
    const swap = join(memoryDir.dir, "memory.memsw.limit_in_bytes");
    if (existsSync(swap)) writeFileSync(swap, String(bytes));
  } catch (error) {
    removeDirs(dirs);
    return { why: `cannot set the memory limit: ${(error as Error).message}` };
  }
  if (pidsPath !== undefined && existsSync(join(roots.v1.pids, "cgroup.procs"))) {
    const pidsDir = makeIn(roots.v1.pids, pidsPath, name);
    if ("dir" in pidsDir) {
      try {
        writeFileSync(join(pidsDir.dir, "pids.max"), String(GRADE_PIDS));
        dirs.push(pidsDir.dir);
      } catch {
        removeDirs([pidsDir.dir]); // (memory bounded, processes per user only)
      }
    }
  }
  const oomKills = () => counter(join(memoryDir.dir, "memory.oom_control"), "oom_kill");
  return { group: gradeGroup("v1", dirs, bytes, oomKills) };
}

// cgroup v2: a sibling of this process's own group where its parent hands out the memory
// controller (a process may not sit in a group whose children use controllers), else a child.
function v2Group(roots: CgroupRoots, name: string, bytes: number, ownPath: string): { group: GradeGroup } | { why: string } {
  let why = "the memory controller is not delegated to this process's control group";
  for (const parent of [dirname(ownPath), ownPath]) {
    const tried = makeIn(roots.unified, parent, name);
    if ("why" in tried) {
      why = tried.why;
      continue;
    }
    const dir = tried.dir;
    if (!existsSync(join(dir, "memory.max"))) {
      removeDirs([dir]);
      continue;
    }
    try {
      writeFileSync(join(dir, "memory.max"), String(bytes));
      if (existsSync(join(dir, "memory.swap.max"))) writeFileSync(join(dir, "memory.swap.max"), "0");
      if (existsSync(join(dir, "pids.max"))) writeFileSync(join(dir, "pids.max"), String(GRADE_PIDS));
    } catch (error) {
      removeDirs([dir]);
      why = `cannot set the memory limit: ${(error as Error).message}`;
      continue;
    }
    return { group: gradeGroup("v2", [dir], bytes, () => counter(join(dir, "memory.events"), "oom_kill")) };
  }
  return { why };
}

// Makes `name` in the hierarchy mounted at `mount`, under `path` (this process's group) where
// that folder is visible, else at the hierarchy's top; groups an earlier grader process left
// there (named after a pid no longer alive) are removed first.
function makeIn(mount: string, path: string, name: string): { dir: string } | { why: string } {
  const under = existsSync(join(mount, path)) ? join(mount, path) : mount;
  sweep(under);
  const dir = join(under, name);
  try {
    mkdirSync(dir);
    return { dir };
  } catch (error) {
    return { why: `cannot make a control group in ${under}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
}

// Groups of graders that ended without removing theirs (a SIGKILL): empty by then, removed.
function sweep(under: string): void {
  let names: string[];
  try {
    names = readdirSync(under).filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const n of names) {
    const pid = Number(n.slice(PREFIX.length).split("-")[0]);
    if (!Number.isInteger(pid) || pid <= 0 || isPidAlive(pid)) continue;
    removeDirs([join(under, n)]);
  }
}

// A "key value" line's value in a flat-keyed cgroup file (0 where the file or the key is missing).
function counter(file: string, key: string): number {
  try {
    const line = readFileSync(file, "utf8").split("\n").find((l) => l.startsWith(`${key} `));
    const value = Number(line?.slice(key.length + 1));
    return Number.isFinite(value) ? value : 0;
  } catch {
    return 0;
  }
}

// Removes the folders that are empty now; the first failure, if any (`busy`: a group that
// still has processes, the one failure worth waiting out).
function removeDirs(dirs: string[]): { message: string; busy: boolean } | undefined {
  let failed: { message: string; busy: boolean } | undefined;
  for (const dir of dirs) {
    try {
      rmdirSync(dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT") failed ??= { message: `${dir}: ${code ?? (error as Error).message}`, busy: code === "EBUSY" };
    }
  }
  return failed;
}

function gradeGroup(version: "v1" | "v2", dirs: string[], memoryBytes: number, oomKills: () => number): GradeGroup {
  const over = new AbortController();
  // Read while the grade runs, so a grade whose process the kernel ended stops at once rather
  // than at its deadline (the timer never keeps the grader alive on its own).
  const watch = setInterval(() => {
    if (oomKills() > 0) {
      clearInterval(watch);
      over.abort(new Error(`the grade's control group reached its memory limit (${Math.round(memoryBytes / 1024 / 1024)} MiB)`));
    }
  }, WATCH_MS);
  watch.unref();
  const procs = dirs.map((dir) => join(dir, "cgroup.procs"));
  return {
    memoryBytes,
    version,
    dirs,
    overLimit: over.signal,
    oomKills,
    // The memory group must be joined (else the shell stops, exit 97, and the payload never
    // starts unbounded); the pids group is joined where it can be.
    wrap: (command) => ["/bin/sh", "-c", 'echo $$ > "$1" || exit 97; [ -z "$2" ] || echo $$ > "$2" 2>/dev/null; shift 2; exec "$@"', "lab-join", procs[0]!, procs[1] ?? "", ...command],
    async remove() {
      clearInterval(watch);
      const until = Date.now() + REMOVE_WAIT_MS;
      for (;;) {
        const failed = removeDirs(dirs);
        if (!failed || !failed.busy || Date.now() >= until) return failed?.message;
        // (Its last processes may still be dying: the namespace's were SIGKILLed a moment ago.)
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
  };
}
