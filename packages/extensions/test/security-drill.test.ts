// The seed's security drill: while a `never` request is pending, the server writes one
// endless line with no newline and floods stderr (both without end, each carrying a
// secret). The client must reject within fixed bytes and time, keep stderr truncated and
// redacted, empty the pending map, end the child and keep its own memory bounded.
// The bounds are fixed and fail when exceeded; the time bound is a hang detector sized for
// a loaded 2-core machine, not a speed target.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { fileURLToPath } from "node:url";
import { expect, it, onTestFinished } from "vitest";
import { isAlive, killAll, makeTempDir, readPids } from "../../../fixtures/index.ts";
import { McpClient, REDACTED } from "../src/mcp-client.ts";
import { waitFor } from "./support.ts";

const TINY_SERVER = fileURLToPath(new URL("./servers/tiny-server.mjs", import.meta.url));
const SECRET = "drill-secret-Qm83vT0aLx5";
const MiB = 1024 * 1024;

/** Largest stdout line the client accepts. */
const MAX_LINE_BYTES = 1 * MiB;
/** Stderr bytes the client keeps. */
const MAX_STDERR_BYTES = 64 * 1024;
/** The pending calls must be rejected within this long after the attack starts. */
const REJECT_WITHIN_MS = 10_000;
/** The client's heap + array buffers may grow at most this much at any moment of the drill. */
const MEMORY_BOUND_BYTES = 64 * MiB;

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;
const used = () => {
  const now = process.memoryUsage();
  return now.heapUsed + now.arrayBuffers;
};

it("an endless line and a stderr flood while `never` is pending: rejected within fixed bytes and time, stderr truncated and redacted, pending empty, child ended, memory bounded", async () => {
  const temp = makeTempDir("ext-drill-");
  const pidFile = `${temp.dir}/pids.txt`;
  const client = new McpClient({
    executable: process.execPath,
    args: [TINY_SERVER, "--mode", "drill", "--pid-file", pidFile],
    env: { DRILL_SECRET: SECRET },
    secrets: [SECRET],
    maxLineBytes: MAX_LINE_BYTES,
    maxStderrBytes: MAX_STDERR_BYTES,
    timeoutMs: 60_000,
    closeTimeoutMs: 2_000,
  });
  onTestFinished(async () => {
    await client.close();
    await killAll(readPids(pidFile));
    temp.cleanup();
  });
  await client.initialize();
  const pid = client.pid!;

  collect();
  const baseline = used();
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, used() - baseline)), 5);
  onTestFinished(() => clearInterval(sampler));

  const never = client.callTool("never");
  const attack = client.callTool("attack");
  const started = Date.now();
  const hang = new Promise<never>((_, reject) => {
    const timer = setTimeout(() => reject(new Error(`not rejected within ${REJECT_WITHIN_MS} ms`)), REJECT_WITHIN_MS);
    onTestFinished(() => clearTimeout(timer));
  });
  const outcomes = await Promise.race([Promise.allSettled([never, attack]), hang]);
  const elapsed = Date.now() - started;
  sampler.refresh();

  for (const outcome of outcomes) {
    expect(outcome).toMatchObject({
      status: "rejected",
      reason: { code: "MCP_PROTOCOL_ERROR", reason: "process", message: expect.stringContaining(`${MAX_LINE_BYTES}`) },
    });
  }
  expect(elapsed).toBeLessThan(REJECT_WITHIN_MS);
  expect(client.pendingCount).toBe(0);

  await waitFor(() => client.pid === undefined && !isAlive(pid), "the drill server to end");
  clearInterval(sampler);
  peak = Math.max(peak, used() - baseline);
  expect(peak, `peak growth ${(peak / MiB).toFixed(1)} MiB`).toBeLessThan(MEMORY_BOUND_BYTES);

  const stderr = client.stderr;
  expect(stderr.truncated).toBe(true);
  expect(Buffer.byteLength(stderr.text)).toBeLessThanOrEqual(MAX_STDERR_BYTES + REDACTED.length);
  expect(stderr.text).toContain(`flood ${REDACTED}`);
  for (let start = 0; start + 4 <= SECRET.length; start += 1) expect(stderr.text).not.toContain(SECRET.slice(start, start + 4));
  const report = (outcomes[0] as PromiseRejectedResult).reason.report();
  expect(JSON.stringify(report)).not.toContain(SECRET.slice(0, 8));
  expect(client.metrics).toMatchObject({ protocolFaults: 1, pending: 0, activeServers: 0, stderrTruncated: true });
});
