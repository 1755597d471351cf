// The client host's pids as its test worker sees them (labs/33-mcp-lite/host/pid-view.ts),
// against a real PID namespace shaped like the launcher's: an init (1), the host (2) under it,
// the host's child (3). Each inner pid maps to the process's pid here; a pid no process of the
// namespace has maps to one no process has; a process outside the namespace is not the host's.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GONE_PID, PidView } from "../../labs/33-mcp-lite/host/pid-view.ts";

const asRoot = process.getuid?.() === 0;
const flags = [...(asRoot ? [] : ["--user", "--map-root-user"]), "--pid", "--fork", "--mount-proc"];
const usable = process.platform === "linux" && existsSync("/usr/bin/unshare") && spawnSync("/usr/bin/unshare", [...flags, "/bin/true"], { timeout: 5_000 }).status === 0;

// The first child of `pid`, waited for (the namespace's processes start one after another).
async function childOf(pid: number): Promise<number> {
  for (;;) {
    const text = existsSync(`/proc/${pid}`) ? readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim() : "";
    if (text) return Number(text.split(/\s+/)[0]);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

let stop: (() => void) | undefined;
afterEach(() => {
  try {
    stop?.();
  } catch {
    // already gone
  }
  stop = undefined;
});

describe.skipIf(!usable)("a client host's pids seen from its worker", () => {
  it("maps the init, the host and the host's child to their pids here, and nothing else", async () => {
    const unshare = spawn("/usr/bin/unshare", [...flags, "/bin/sh", "-c", "/bin/sh -c 'sleep 3143 & wait' & wait"], { stdio: "ignore" });
    stop = () => unshare.kill("SIGKILL");
    const init = await childOf(unshare.pid!);
    stop = () => process.kill(init, "SIGKILL");
    const host = await childOf(init);
    const child = await childOf(host);
    const view = new PidView(host, 2, init);
    expect(view.namespaced).toBe(true);
    expect([1, 2, 3].map((pid) => view.toWorker(pid))).toEqual([init, host, child]);
    expect(view.toWorker(99)).toBe(GONE_PID);
    expect(view.owns(child)).toBe(true);
    expect(view.owns(process.pid)).toBe(false);
  });

  it("finds a process started after its pid was asked for and found by no process", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pid-view-"));
    const fifo = join(dir, "go");
    spawnSync("mkfifo", [fifo]);
    try {
      // The host starts its second child (inner pid 4) only once the test writes to the FIFO.
      const unshare = spawn("/usr/bin/unshare", [...flags, "/bin/sh", "-c", `/bin/sh -c 'sleep 3143 & read line < ${fifo}; sleep 3144 & wait' & wait`], { stdio: "ignore" });
      stop = () => unshare.kill("SIGKILL");
      const init = await childOf(unshare.pid!);
      stop = () => process.kill(init, "SIGKILL");
      const host = await childOf(init);
      await childOf(host);
      const view = new PidView(host, 2, init);
      expect(view.toWorker(4)).toBe(GONE_PID);
      expect(view.toWorker(4)).toBe(GONE_PID); // (asked again: the same answer)
      writeFileSync(fifo, "go\n");
      let second: number | undefined;
      while (second === undefined) {
        const pids = readFileSync(`/proc/${host}/task/${host}/children`, "utf8").trim().split(/\s+/).map(Number);
        second = pids.find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("3144"));
        if (second === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(view.toWorker(4)).toBe(second);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leaves pids as they are for a host without a namespace of its own", () => {
    const view = new PidView(process.pid, process.pid, undefined);
    expect(view.namespaced).toBe(false);
    expect(view.toWorker(12345)).toBe(12345);
    expect(view.owns(process.pid)).toBe(false);
  });
});
