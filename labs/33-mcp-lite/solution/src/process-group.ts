// The server's process group (Unix: the server leads a group of its own, so a signal
// reaches its grandchildren too): signalling it, waiting for leftovers after the leader
// exited, and a last-resort kill of every live group when the client's own process exits.

import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** How long to wait for leftover members of the server's process group to disappear (a
 *  SIGKILLed process is gone within milliseconds, but on a machine under heavy load its exit
 *  can wait for a CPU longer than a second; this only bounds a member that never goes). */
export const GROUP_REAP_MS = 5_000;

// Stryker disable next-line ConditionalExpression,StringLiteral: on Linux, where the mutation run happens, the Windows branches below never run
export const isWindows = process.platform === "win32";

// Signals the child's whole group (on Windows, the child alone). A group already gone is
// not an error: the exit path reports what happened.
// (A child that never started has no pid: process.kill(NaN) throws, which is caught.)
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    // Stryker disable next-line ConditionalExpression: Windows only
    if (isWindows) child.kill(signal);
    else process.kill(-child.pid!, signal);
  } catch {
    // ESRCH: already gone.
  }
}

/** How often reapGroup looks again while members of the group are still alive. */
export const GROUP_REAP_POLL_MS = 10;

/** What reapGroup needs from the system and the clock; a test passes a fake one to step through its polls. */
export interface ReapSystem {
  /** SIGKILL to every member of the group; throws (ESRCH) when no member is left. */
  killGroup(pgid: number): void;
  hasLiveMembers(pgid: number): boolean;
  now(): number;
  pause(ms: number): Promise<void>;
}

export const realReapSystem: ReapSystem = {
  killGroup: (pgid) => process.kill(-pgid, "SIGKILL"),
  hasLiveMembers: (pgid) => groupHasLiveMembers(pgid),
  now: () => Date.now(),
  pause: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

// After the leader exited, anything left in its group is ours to end: kill it, then look
// again every GROUP_REAP_POLL_MS until no member is alive, for GROUP_REAP_MS at most.
export async function reapGroup(pgid: number, system: ReapSystem = realReapSystem): Promise<void> {
  // Stryker disable next-line ConditionalExpression: Windows only
  if (isWindows) return;
  try {
    system.killGroup(pgid);
  } catch {
    return; // no member left: the common case, and the cheap one
  }
  const deadline = system.now() + GROUP_REAP_MS;
  while (system.hasLiveMembers(pgid) && system.now() < deadline) await system.pause(GROUP_REAP_POLL_MS);
}

/** How the group's members are read from /proc; a test passes a fake one whose entries vanish mid-scan. */
export interface ProcReader {
  /** The names in /proc. */
  entries(): string[];
  /** The text of /proc/<entry>/stat; throws when the process vanished since entries(). */
  stat(entry: string): string;
}

export const realProc: ProcReader = {
  entries: () => readdirSync("/proc"),
  stat: (entry) => readFileSync(`/proc/${entry}/stat`, "utf8"),
};

// A killed process stays a zombie until its new parent reaps it, and not every init does;
// zombies hold no resources, so only members in another state count as alive.
export function groupHasLiveMembers(pgid: number, proc: ProcReader = realProc): boolean {
  // Stryker disable all: the branch for systems without /proc; the mutation run is on Linux
  if (process.platform !== "linux") {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  // Stryker restore all
  return listGroupMembers(pgid, proc).some((member) => member.state !== "Z");
}

export function listGroupMembers(pgid: number, proc: ProcReader = realProc): Array<{ pid: number; state: string }> {
  // Only runs when a group outlived its leader. /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."
  const members: Array<{ pid: number; state: string }> = [];
  let entries: string[];
  try {
    entries = proc.entries();
  } catch {
    return members;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = proc.stat(entry);
    } catch {
      continue; // the process ended between the listing and this read
    }
    // The command name may hold spaces and parentheses: the fields start after its last ")".
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid) members.push({ pid: Number(entry), state: state! });
  }
  return members;
}

/** Something that can be killed synchronously, from a process 'exit' handler. */
export interface Killable {
  killNow(): void;
}

// Servers still running, killed if the client's own process exits first, so a crashing
// agent does not strand its servers.
const live = new Set<Killable>();
let exitHookInstalled = false;

// Registers a running server with the exit hook (installed once, on first use).
export function killOnExit(server: Killable): void {
  live.add(server);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const each of live) each.killNow();
  });
}

// The server is gone: the exit hook no longer needs to reach it.
export function forgetOnExit(server: Killable): void {
  live.delete(server);
}
