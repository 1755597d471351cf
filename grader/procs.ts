// Process-table helpers for the grader (Linux /proc; elsewhere they see nothing and the
// grader falls back to process-group kills and pid files).

import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from "node:fs";
import { sep } from "node:path";

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  /** Start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
  startTicks: number;
}

// Reads one process's stat line; undefined when it is gone or unreadable.
export function procInfo(pid: number): ProcInfo | undefined {
  const stat = readStat(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // "pid (comm) state ppid pgrp session ..." — comm may contain spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    pid,
    state: fields[0] ?? "?",
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    startTicks: Number(fields[19]),
  };
}

/** Bytes a kept-descriptor reader reads of a file (its first 4 KiB). */
export const PROC_READ_BYTES = 4096;

/**
 * A reader of small /proc files (their first 4 KiB, latin1; undefined where one cannot be
 * read) that keeps each file's descriptor open between reads, at most `max` of them (the
 * oldest closed first; 0 keeps none). A /proc file read again from offset 0 is made afresh, at
 * a fifth to a half of the cost of opening it (a grade's test workers list the process table
 * around every test, and their hang clocks read the path's schedstat files every 10 ms). A
 * kept descriptor stays with the process it was opened for: once that process is gone its
 * reads fail (ESRCH) and the path is opened again, which finds whichever process has the pid
 * now, as a fresh open always did. Only paths under /proc/ are kept; descriptors are opened
 * close-on-exec, so no process this one starts holds them.
 */
export function keptProcReader(max: number): (file: string) => string | undefined {
  const kept = new Map<string, number>();
  const buffer = Buffer.alloc(PROC_READ_BYTES);
  const readAt = (fd: number) => buffer.toString("latin1", 0, readSync(fd, buffer, 0, buffer.length, 0));
  return (file) => {
    const held = kept.get(file);
    if (held !== undefined) {
      try {
        return readAt(held);
      } catch {
        kept.delete(file);
        closeQuietly(held);
      }
    }
    let fd: number | undefined;
    try {
      fd = openSync(file, "r");
      const text = readAt(fd);
      if (max > 0 && file.startsWith("/proc/")) {
        if (kept.size >= max) {
          const [oldest, oldFd] = kept.entries().next().value as [string, number];
          kept.delete(oldest);
          closeQuietly(oldFd);
        }
        kept.set(file, fd);
        fd = undefined;
      }
      return text;
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeQuietly(fd);
    }
  };
}
function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}
const readStat = keptProcReader(160);

// The pid of every process visible in /proc (none where there is no /proc).
export function procPids(): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  return entries.filter((entry) => /^\d+$/.test(entry)).map(Number);
}

// Every process visible in /proc.
export function listProcs(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const pid of procPids()) {
    const info = procInfo(pid);
    if (info) out.push(info);
  }
  return out;
}

/** A live process: present and not a zombie (a zombie holds no resources). */
export function isLive(info: ProcInfo | undefined): info is ProcInfo {
  return info !== undefined && info.state !== "Z" && info.state !== "X";
}

// Is `pid` alive (present and not a zombie)? Where there is no /proc, asks with signal 0.
export function isPidAlive(pid: number): boolean {
  const info = procInfo(pid);
  if (info) return isLive(info);
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Live descendants of `root` (not root itself), following parent links.
export function descendants(root: number, procs: ProcInfo[] = listProcs()): ProcInfo[] {
  const children = new Map<number, ProcInfo[]>();
  for (const p of procs) {
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const out: ProcInfo[] = [];
  const stack = [root];
  const seen = new Set<number>([root]);
  while (stack.length > 0) {
    for (const child of children.get(stack.pop()!) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      stack.push(child.pid);
      if (isLive(child)) out.push(child);
    }
  }
  return out;
}

// Live processes whose environment carries NAME=VALUE: anything started, directly or
// through a double fork, from a process that had the grade's token and kept its env.
export function withEnvToken(name: string, value: string, procs: ProcInfo[] = listProcs()): ProcInfo[] {
  const entry = `${name}=${value}`;
  const out: ProcInfo[] = [];
  for (const p of procs) {
    if (p.pid === process.pid || !isLive(p)) continue;
    try {
      // /proc/<pid>/environ is the environment the process started with, NUL-separated.
      if (readFileSync(`/proc/${p.pid}/environ`, "latin1").split("\0").includes(entry)) out.push(p);
    } catch {
      // Gone, or not ours to read: not ours to kill either.
    }
  }
  return out;
}

// Processes whose working directory is `dir` or inside it. Each grade runs its tests from a
// private directory, so whatever the submission starts inherits it: even a daemon that
// double-forked out of the process tree and dropped its environment is found here, unless
// it also changed directory (a known limit, see grader/README.md).
export function withCwdUnder(dir: string, procs: ProcInfo[] = listProcs()): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const p of procs) {
    if (p.pid === process.pid || !isLive(p)) continue;
    try {
      const cwd = readlinkSync(`/proc/${p.pid}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}${sep}`)) out.push(p);
    } catch {
      // Gone, or not ours to read: not ours to kill either.
    }
  }
  return out;
}

// The command line of a process, shortened, for reports.
export function commandLine(pid: number, max = 160): string {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
    return text.length > max ? `${text.slice(0, max)}…` : text;
  } catch {
    return "?";
  }
}

// SIGKILLs each pid (errors ignored) and waits, bounded, until none is live.
export async function killAndWait(pids: Iterable<number>, waitMs = 2_000): Promise<number[]> {
  let left = [...new Set(pids)];
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  const deadline = Date.now() + waitMs;
  left = left.filter((pid) => isLive(procInfo(pid)));
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    left = left.filter((pid) => isLive(procInfo(pid)));
  }
  return left;
}

// SIGKILLs a whole process group; false when it had no member left.
export function killGroup(pgid: number): boolean {
  try {
    process.kill(-pgid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}
