// The server's process group, with real (tiny) process groups: a detached `sh` that leaves
// a `sleep` behind in its group. Linux only, like the /proc scan it checks.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isAlive } from "../../fixtures/index.ts";
import {
  forgetOnExit,
  GROUP_REAP_MS,
  GROUP_REAP_POLL_MS,
  groupHasLiveMembers,
  killOnExit,
  listGroupMembers,
  type ProcReader,
  realProc,
  realReapSystem,
  reapGroup,
  type ReapSystem,
  signalGroup,
} from "#submission/src/process-group.ts";

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

// A group led by `sh` with one `sleep` member; resolves once the sleep's pid is known.
// Resolves once the child has exited, whether or not its "exit" event already fired.
async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
}

async function group(script = "sleep 30 & echo $!; wait"): Promise<{ leader: ChildProcess; member: number }> {
  const leader = spawn("sh", ["-c", script], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  started.push(leader.pid!);
  const [chunk] = (await once(leader.stdout!, "data")) as [Buffer];
  return { leader, member: Number(chunk.toString().trim()) };
}

async function gone(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`pid ${pid} still alive`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.runIf(process.platform === "linux")("process group", () => {
  it("lists the live members of a group with their states, and nothing for an unknown group", async () => {
    const { leader, member } = await group();
    const members = listGroupMembers(leader.pid!);
    expect(members.map((m) => m.pid).sort()).toEqual([leader.pid!, member].sort());
    for (const m of members) expect(m.state).toMatch(/^[RSD]$/);
    expect(listGroupMembers(2 ** 22 + 12_345)).toEqual([]);
  });

  it("counts a zombie member as gone, a running one as alive", async () => {
    // `exec sleep` never reaps its child: the short sleep stays a zombie in the group.
    const { leader, member } = await group("sleep 0.05 & echo $!; exec sleep 30");
    const states = () => Object.fromEntries(listGroupMembers(leader.pid!).map((m) => [m.pid, m.state]));
    await gone(member);
    expect(states()[member]).toBe("Z");
    expect(groupHasLiveMembers(leader.pid!)).toBe(true); // the leader still runs
    process.kill(leader.pid!, "SIGKILL");
    await once(leader, "exit");
    // What is left, if anything, is the zombie (or nothing, once an init reaped it).
    expect(Object.values(states()).every((state) => state === "Z")).toBe(true);
    expect(groupHasLiveMembers(leader.pid!)).toBe(false);
  });

  it("says a group of running processes is alive, and an unknown group is not", async () => {
    const { leader } = await group();
    expect(groupHasLiveMembers(leader.pid!)).toBe(true);
    expect(groupHasLiveMembers(2 ** 22 + 12_345)).toBe(false);
  });

  it("signals the whole group, leader and member alike", async () => {
    const { leader, member } = await group();
    signalGroup(leader, "SIGTERM");
    await gone(member);
    await gone(leader.pid!);
  });

  it("does not throw for a group that is gone or a child that never started", async () => {
    const { leader, member } = await group();
    signalGroup(leader, "SIGKILL");
    await gone(member);
    expect(() => signalGroup(leader, "SIGKILL")).not.toThrow();
    expect(() => signalGroup({ pid: undefined } as ChildProcess, "SIGKILL")).not.toThrow();
  });

  it("reaps what the leader left in its group, and returns once it is gone", async () => {
    const { leader, member } = await group("sleep 30 & echo $!");
    // The leader exits right after its echo: on a loaded machine that can be before we listen.
    await exited(leader);
    expect(isAlive(member)).toBe(true);
    await reapGroup(leader.pid!);
    expect(isAlive(member)).toBe(false);
  });

  it("reaps with SIGKILL: a leftover member that ignores SIGTERM goes too", async () => {
    // The member ignores SIGTERM before it prints its pid (an ignored signal stays ignored
    // across exec), then the leader exits.
    const { leader, member } = await group(`sh -c 'trap "" TERM; echo $$; exec sleep 30' &`);
    await exited(leader);
    await reapGroup(leader.pid!);
    expect(isAlive(member)).toBe(false);
  });

  it("resolves for a group that has no member at all", async () => {
    await expect(reapGroup(2 ** 22 + 12_345)).resolves.toBeUndefined();
  });

  it("reads /proc and the clock through its real system, and pauses for the time asked", async () => {
    const { leader } = await group();
    expect(realReapSystem.hasLiveMembers(leader.pid!)).toBe(true);
    expect(realReapSystem.hasLiveMembers(2 ** 22 + 12_345)).toBe(false);
    const before = Date.now();
    const now = realReapSystem.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
    expect(realProc.entries()).toContain(String(leader.pid));
    expect(realProc.stat(String(leader.pid))).toMatch(new RegExp(`^${leader.pid} \\(sh\\) `));
    vi.useFakeTimers({ toFake: ["setTimeout"] });
    try {
      let paused = false;
      void realReapSystem.pause(GROUP_REAP_POLL_MS).then(() => (paused = true));
      await vi.advanceTimersByTimeAsync(GROUP_REAP_POLL_MS - 1);
      expect(paused).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(paused).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("kills every registered server when the client's process exits, and forgets one that is gone", () => {
    const before = process.listeners("exit");
    const a = { killNow: vi.fn() };
    const b = { killNow: vi.fn() };
    killOnExit(a);
    killOnExit(b);
    const added = process.listeners("exit").filter((listener) => !before.includes(listener));
    expect(added).toHaveLength(1); // one hook, however many servers
    forgetOnExit(b);
    (added[0] as () => void)();
    expect(a.killNow).toHaveBeenCalledTimes(1);
    expect(b.killNow).not.toHaveBeenCalled();
    forgetOnExit(a);
    process.off("exit", added[0] as () => void);
  });
});

// reapGroup's loop against a fake system: a clock that moves only when reapGroup pauses, and
// a group whose members stay alive for a given number of polls. Every step is logged, so a
// test reads exactly when reapGroup looked, paused and returned.
function fakeSystem(alivePolls: number, killThrows = false): ReapSystem & { log: string[] } {
  let clock = 5_000;
  let polls = 0;
  const log: string[] = [];
  return {
    log,
    killGroup(pgid) {
      log.push(`kill ${pgid}`);
      if (killThrows) throw Object.assign(new Error("kill ESRCH"), { code: "ESRCH" });
    },
    hasLiveMembers() {
      const alive = polls++ < alivePolls;
      log.push(alive ? "alive" : "gone");
      return alive;
    },
    now: () => clock,
    async pause(ms) {
      log.push(`pause ${ms}`);
      clock += ms;
    },
  };
}

describe.skipIf(process.platform === "win32")("reapGroup's waiting loop", () => {
  it("kills the group, then polls until its members are gone: alive for 3 polls, it returns right after the 4th", async () => {
    const system = fakeSystem(3);
    await reapGroup(42, system);
    const pause = `pause ${GROUP_REAP_POLL_MS}`;
    expect(system.log).toEqual(["kill 42", "alive", pause, "alive", pause, "alive", pause, "gone"]);
  });

  it("returns without polling when killing the group finds no member", async () => {
    const system = fakeSystem(Infinity, true);
    await reapGroup(42, system);
    expect(system.log).toEqual(["kill 42"]);
  });

  it("returns after one look when nothing in the group is alive after the kill", async () => {
    const system = fakeSystem(0);
    await reapGroup(42, system);
    expect(system.log).toEqual(["kill 42", "gone"]);
  });

  it("gives up at the deadline when a member never goes: GROUP_REAP_MS of pauses, no more", async () => {
    const system = fakeSystem(Infinity);
    await reapGroup(42, system);
    const pauses = system.log.filter((step) => step.startsWith("pause"));
    expect(pauses).toHaveLength(GROUP_REAP_MS / GROUP_REAP_POLL_MS);
    expect(system.log.at(-1)).toBe("alive"); // the last look still saw it, then time was up
    expect(system.now() - 5_000).toBe(GROUP_REAP_MS);
  });
});

// The /proc scan against a fake /proc: entries that are not processes, a process that ends
// between the listing and the read, command names with spaces and parentheses.
function fakeProc(stats: Record<string, string | Error>): ProcReader & { read: string[] } {
  const read: string[] = [];
  return {
    read,
    entries: () => Object.keys(stats),
    stat(entry) {
      read.push(entry);
      const stat = stats[entry];
      if (stat === undefined || stat instanceof Error) throw stat ?? new Error(`ENOENT ${entry}`);
      return stat;
    },
  };
}

// A /proc/<pid>/stat line: "pid (comm) state ppid pgrp session ...".
const stat = (pid: number | string, comm: string, state: string, pgrp: number) => `${pid} (${comm}) ${state} 1 ${pgrp} ${pgrp} 0 -1`;

describe.runIf(process.platform === "linux")("the /proc scan", () => {
  it("lists the members of one group with their states, skipping what is not a process and what vanished", () => {
    const proc = fakeProc({
      "self": stat(300, "self", "R", 77),
      "300x": stat(301, "x", "R", 77),
      "x300": stat(302, "x", "R", 77),
      "300": stat(300, "server", "S", 77),
      "301": new Error("ENOENT: vanished"),
      "302": stat(302, "odd ) name (x)", "R", 77),
      "303": stat(303, "other", "S", 78),
      "304": stat(304, "zombie", "Z", 77),
      "7": stat(7, "s", "D", 77),
    });
    expect(listGroupMembers(77, proc)).toEqual([
      { pid: 7, state: "D" },
      { pid: 300, state: "S" },
      { pid: 302, state: "R" },
      { pid: 304, state: "Z" },
    ]);
    expect(proc.read.sort()).toEqual(["300", "301", "302", "303", "304", "7"]);
  });

  it("finds no member when /proc cannot be listed", () => {
    const proc: ProcReader = {
      entries: () => {
        throw new Error("ENOENT: no /proc");
      },
      stat: () => stat(1, "init", "S", 1),
    };
    expect(listGroupMembers(1, proc)).toEqual([]);
    expect(groupHasLiveMembers(1, proc)).toBe(false);
  });

  it("counts a group as alive while one member is not a zombie", () => {
    const zombies = { "10": stat(10, "a", "Z", 9), "11": stat(11, "b", "Z", 9) };
    expect(groupHasLiveMembers(9, fakeProc(zombies))).toBe(false);
    expect(groupHasLiveMembers(9, fakeProc({ ...zombies, "12": stat(12, "c", "S", 9) }))).toBe(true);
    expect(groupHasLiveMembers(9, fakeProc({ ...zombies, "12": stat(12, "c", "S", 8) }))).toBe(false);
    expect(groupHasLiveMembers(9, fakeProc({}))).toBe(false);
  });
});
