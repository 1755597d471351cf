// The grade's control group (grader/sandbox/cgroup.ts): made with its limits where the
// machine allows one, said why not where it does not; stale groups of dead graders swept;
// and, on this machine's own cgroups where the tests may make one, a process joined through
// wrap() is inside it, one that takes more memory than the limit is ended by the kernel and
// counted (overLimit aborts), a join that cannot happen stops before the command runs, and
// remove() leaves nothing.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GRADE_PIDS, makeGradeGroup, type CgroupRoots, type GradeGroup } from "../../grader/sandbox/cgroup.ts";

const scratch = mkdtempSync(join(tmpdir(), "lab-cgroup-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let layouts = 0;
// A folder that looks like a cgroup v1 mount (memory and pids) to makeGradeGroup.
function v1Layout(self: string): CgroupRoots {
  const base = join(scratch, `v1-${layouts++}`);
  mkdirSync(join(base, "memory"), { recursive: true });
  mkdirSync(join(base, "pids"), { recursive: true });
  writeFileSync(join(base, "memory", "memory.limit_in_bytes"), "9223372036854771712\n");
  writeFileSync(join(base, "pids", "cgroup.procs"), "");
  return { unified: join(base, "none"), v1: { memory: join(base, "memory"), pids: join(base, "pids") }, self: () => self };
}

// Ends a fake group's watch: its folders hold plain files, so remove() reports them, at once.
async function drop(group: GradeGroup): Promise<void> {
  expect(await group.remove()).toMatch(/ENOTEMPTY/);
}

describe("makeGradeGroup on a cgroup v1 layout", () => {
  it("makes one folder per hierarchy with the grade's limits, and counts the kernel's out-of-memory kills", async () => {
    const roots = v1Layout("4:memory:/not/here\n8:pids:/\n");
    const made = makeGradeGroup(100, roots);
    if (!("group" in made)) throw new Error(made.why);
    const { group } = made;
    expect(group.version).toBe("v1");
    expect(group.dirs).toHaveLength(2);
    const [memory, pids] = group.dirs as [string, string];
    // (This process's own group is not in the mount: the top of the hierarchy is used.)
    expect(memory.startsWith(roots.v1.memory)).toBe(true);
    expect(readFileSync(join(memory, "memory.limit_in_bytes"), "utf8")).toBe(String(100 * 1024 * 1024));
    expect(readFileSync(join(pids, "pids.max"), "utf8")).toBe(String(GRADE_PIDS));
    expect(group.memoryBytes).toBe(100 * 1024 * 1024);
    expect(group.oomKills()).toBe(0);
    expect(group.overLimit.aborted).toBe(false);
    writeFileSync(join(memory, "memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
    expect(group.oomKills()).toBe(2);
    // The watch reads the count while the grade runs: the signal follows.
    if (!group.overLimit.aborted) await new Promise((resolve) => group.overLimit.addEventListener("abort", resolve, { once: true }));
    expect(String(group.overLimit.reason)).toContain("memory limit (100 MiB)");
    await drop(group);
  });

  it("writes the swap limit where the kernel accounts swap, and goes on without a pids group where there is none", async () => {
    const roots = v1Layout("4:memory:/\n");
    writeFileSync(join(roots.v1.memory, "memory.memsw.limit_in_bytes"), "0");
    const made = makeGradeGroup(64, roots);
    if (!("group" in made)) throw new Error(made.why);
    expect(made.group.dirs).toHaveLength(1);
    // (A fake hierarchy has no such file in the new folder until the grader writes one.)
    expect(readFileSync(join(made.group.dirs[0]!, "memory.limit_in_bytes"), "utf8")).toBe(String(64 * 1024 * 1024));
    await drop(made.group);
  });

  it("removes the empty groups of graders that are gone, and keeps those of live ones", async () => {
    const roots = v1Layout("4:memory:/\n8:pids:/\n");
    const stale = join(roots.v1.memory, "lab-grade-999999999-0"); // above any pid_max: no such process
    const live = join(roots.v1.memory, `lab-grade-${process.pid}-777`);
    mkdirSync(stale);
    mkdirSync(live);
    const made = makeGradeGroup(64, roots);
    if (!("group" in made)) throw new Error(made.why);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    await drop(made.group);
  });
});

describe("makeGradeGroup says why there is no group", () => {
  it("without a cgroup file system, without a limit, or where v2 does not delegate the memory controller", () => {
    const empty = join(scratch, "empty");
    mkdirSync(empty, { recursive: true });
    const none: CgroupRoots = { unified: empty, v1: { memory: join(empty, "m"), pids: join(empty, "p") }, self: () => "0::/\n" };
    expect(makeGradeGroup(64, none)).toEqual({ why: "no cgroup file system with a memory controller is mounted" });
    expect(makeGradeGroup(0, none)).toEqual({ why: "no memory limit asked for" });
    expect(makeGradeGroup(64, { ...none, self: () => { throw new Error("EACCES"); } })).toEqual({ why: "cannot read this process's control groups: EACCES" });
    // cgroup v2 where neither the parent nor this process's own group hands out memory.max.
    const unified = join(scratch, "v2");
    mkdirSync(join(unified, "user", "session"), { recursive: true });
    writeFileSync(join(unified, "cgroup.controllers"), "cpu io\n");
    const made = makeGradeGroup(64, { unified, v1: none.v1, self: () => "0::/user/session\n" });
    expect(made).toEqual({ why: "the memory controller is not delegated to this process's control group" });
    // Nothing left behind by the tries.
    expect(existsSync(join(unified, "user", `lab-grade-${process.pid}-0`))).toBe(false);
  });
});

// This machine's own control groups, where the tests may make one (root, or a delegated v2 tree).
const probe = makeGradeGroup(64);
const real = "group" in probe;
if ("group" in probe) await probe.group.remove();

// Runs `command` through the group's wrap(); its exit code or signal and what it printed.
function run(group: GradeGroup, command: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const [file, ...args] = group.wrap(command);
  const child = spawn(file!, args, { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, out })));
}

describe.skipIf(!real)(`this machine's control groups${real ? "" : ` (skipped: ${"why" in probe ? probe.why : ""})`}`, () => {
  it("joins the command to the group, lets the kernel end one that takes more than the limit, and leaves nothing", { timeout: 30_000 }, async () => {
    const made = makeGradeGroup(64);
    if (!("group" in made)) throw new Error(made.why);
    const { group } = made;
    try {
      const inside = await run(group, ["/bin/cat", "/proc/self/cgroup"]);
      expect(inside.code).toBe(0);
      const name = group.dirs[0]!.split("/").pop()!;
      expect(inside.out).toContain(name);
      expect(group.oomKills()).toBe(0);
      // 256 MiB written in 16 MiB steps under a 64 MiB limit (no swap: memsw or swap.max).
      const hog = await run(group, [process.execPath, "-e", "const k = []; for (let i = 0; i < 16; i++) k.push(Buffer.alloc(16 * 1024 * 1024, 1)); console.log('survived')"]);
      expect(hog.signal).toBe("SIGKILL");
      expect(hog.out).not.toContain("survived");
      expect(group.oomKills()).toBeGreaterThanOrEqual(1);
      if (!group.overLimit.aborted) await new Promise((resolve) => group.overLimit.addEventListener("abort", resolve, { once: true }));
    } finally {
      expect(await group.remove()).toBeUndefined();
    }
    for (const dir of group.dirs) expect(existsSync(dir), dir).toBe(false);
    // A group that is gone cannot be joined: the shell stops (97) and the command never runs.
    const after = await run(group, ["/bin/echo", "ran"]);
    expect(after.code).toBe(97);
    expect(after.out).toBe("");
  });
});
