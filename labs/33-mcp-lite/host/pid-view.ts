// A client host's pids as its test worker sees them. Under the sandbox's launcher the host
// runs in a PID namespace of its own (grader/sandbox/host-launcher.mjs): the client, and the
// servers it starts, report pids of that namespace (the host is 2 there, after the
// namespace's init). The worker finds the namespace's processes in its own /proc as the init
// and the init's descendants (by parent pid, from the pids the launcher reported), and
// /proc/<pid>/status NSpid names each one's pid one level down. Without a namespace of its
// own (plain child) every pid is the worker's already.

import { readFileSync } from "node:fs";
import { procInfo, procPids, type ProcInfo } from "../../../grader/procs.ts";

/** Stands for a pid of the host's namespace that no process has any more (above any pid_max). */
export const GONE_PID = 2 ** 22 + 1;

export class PidView {
  /** Host-namespace pid → this worker's, for every process seen so far. */
  private readonly seen = new Map<number, number>();

  /** pid, init: this worker's view; nsPid: the host's own pid in its namespace. */
  constructor(
    private readonly pid: number,
    private readonly nsPid: number,
    private readonly init: number | undefined,
  ) {}

  /** True when the host has a PID namespace of its own. */
  get namespaced(): boolean {
    return this.init !== undefined && this.nsPid !== this.pid;
  }

  /** A pid of the host's namespace as this worker sees it (GONE_PID when no process has it now). */
  toWorker(pid: number): number {
    if (!this.namespaced || !Number.isInteger(pid) || pid <= 0) return pid;
    if (!this.seen.has(pid)) this.scan();
    return this.seen.get(pid) ?? GONE_PID;
  }

  /** True when `pid` (this worker's view) is a process of the host's namespace. */
  owns(pid: number): boolean {
    if (!this.namespaced) return false;
    const known = () => [...this.seen.values()].includes(pid);
    if (known()) return true;
    this.scan();
    return known();
  }

  // The process table (one stat line each, from kept descriptors: grader/procs.ts) gives each
  // process's parent; only the init's descendants have their status read, for NSpid, and
  // only once per process (a pid with the same start time is the same process). Where /proc
  // lists no pid the last scan did not see, and that scan found every process's parent, the
  // scan would find nothing new (a process already seen joins the namespace's tree only by
  // being born in it), so it is not made: a pid asked for again and again (one that ended
  // before it was first looked for) costs a listing of /proc, not a scan. (A parent that ended
  // while the table was read leaves its children's parent unknown: the next lookup scans.)
  private scan(): void {
    const pids = procPids();
    const last = this.lastPids;
    if (last && pids.every((pid) => last.has(pid))) return;
    const children = new Map<number, ProcInfo[]>();
    let parentUnknown = false;
    const infos = pids.map((pid) => procInfo(pid)).filter((info): info is ProcInfo => info !== undefined);
    const listed = new Set(infos.map((info) => info.pid));
    for (const info of infos) {
      if (info.ppid !== 0 && !listed.has(info.ppid)) parentUnknown = true;
      const list = children.get(info.ppid) ?? [];
      list.push(info);
      children.set(info.ppid, list);
    }
    this.lastPids = parentUnknown ? undefined : listed;
    this.seen.set(this.nsPid, this.pid);
    if (this.init !== undefined) this.seen.set(1, this.init);
    const stack = [this.init ?? this.pid];
    const visited = new Set(stack);
    const inners = new Map<string, number>();
    while (stack.length > 0) {
      for (const child of children.get(stack.pop()!) ?? []) {
        if (visited.has(child.pid)) continue;
        visited.add(child.pid);
        const inner = this.innerPid(child);
        if (inner === undefined) continue;
        inners.set(`${child.pid}:${child.startTicks}`, inner);
        this.seen.set(inner, child.pid);
        stack.push(child.pid);
      }
    }
    this.inners = inners;
  }

  /** The processes the last scan read, where it found every one's parent. */
  private lastPids: Set<number> | undefined;
  /** Inner pids of the namespace's processes at the last scan, by "pid:start time" here. */
  private inners = new Map<string, number>();

  // A process's pid one namespace down (/proc/<pid>/status NSpid), undefined where it has none.
  private innerPid(info: ProcInfo): number | undefined {
    const known = this.inners.get(`${info.pid}:${info.startTicks}`);
    if (known !== undefined) return known;
    try {
      const status = readFileSync(`/proc/${info.pid}/status`, "utf8");
      const levels = (/^NSpid:\s*(.*)$/m.exec(status)?.[1] ?? "").trim().split(/\s+/).map(Number);
      return levels.length < 2 ? undefined : levels[1];
    } catch {
      return undefined; // gone
    }
  }
}
