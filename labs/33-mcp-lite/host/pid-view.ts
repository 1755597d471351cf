// A client host's pids as its test worker sees them. Under the sandbox's launcher the host
// runs in a PID namespace of its own (grader/sandbox/host-launcher.mjs): the client, and the
// servers it starts, report pids of that namespace (the host is 2 there, after the
// namespace's init). The worker finds the namespace's processes in its own /proc as the init
// and the init's descendants (by parent pid, from the pids the launcher reported), and
// /proc/<pid>/status NSpid names each one's pid one level down. Without a namespace of its
// own (plain child) every pid is the worker's already.

import { readdirSync, readFileSync } from "node:fs";

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

  private scan(): void {
    const children = new Map<number, Array<{ pid: number; inner: number }>>();
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const status = readFileSync(`/proc/${entry}/status`, "utf8");
        const ppid = Number(/^PPid:\s*(\d+)/m.exec(status)?.[1]);
        const levels = (/^NSpid:\s*(.*)$/m.exec(status)?.[1] ?? "").trim().split(/\s+/).map(Number);
        if (levels.length < 2) continue;
        const list = children.get(ppid) ?? [];
        list.push({ pid: Number(entry), inner: levels[1]! });
        children.set(ppid, list);
      } catch {
        // gone
      }
    }
    this.seen.set(this.nsPid, this.pid);
    if (this.init !== undefined) this.seen.set(1, this.init);
    const stack = [this.init ?? this.pid];
    const visited = new Set(stack);
    while (stack.length > 0) {
      for (const child of children.get(stack.pop()!) ?? []) {
        if (visited.has(child.pid)) continue;
        visited.add(child.pid);
        this.seen.set(child.inner, child.pid);
        stack.push(child.pid);
      }
    }
  }
}
