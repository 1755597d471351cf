// The server's process group, with real (tiny) process groups: a detached `sh` that leaves
// a `sleep` behind in its group. Linux only, like the /proc scan it checks.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isAlive } from "../../fixtures/index.ts";
import { forgetOnExit, GROUP_REAP_MS, groupHasLiveMembers, killOnExit, listGroupMembers, reapGroup, signalGroup } from "#submission/src/process-group.ts";

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
    await once(leader, "exit");
    expect(isAlive(member)).toBe(true);
    await reapGroup(leader.pid!);
    expect(isAlive(member)).toBe(false);
  });

  it("returns at once for an empty group", async () => {
    const start = Date.now();
    await reapGroup(2 ** 22 + 12_345);
    expect(Date.now() - start).toBeLessThan(GROUP_REAP_MS);
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
