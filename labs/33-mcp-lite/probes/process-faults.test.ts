// Rubric probe: 进程 (process), starting and stopping around failures. Bad options are
// refused before anything is started; a missing or non-executable program rejects
// initialize() with MCP_SPAWN_FAILED (never an uncaught spawn error that crashes the host);
// close() after a protocol fault or a failed handshake resolves only once the server and
// its children are gone. The servers here ignore SIGTERM and stdin's end, so they live until
// the SIGKILL closeTimeoutMs later: a close() that does not wait for a stop already under
// way resolves while they still run, every time.

import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";
import { McpClient } from "#submission/src/mcp-client.ts";
import { check, HANG_MS, initialize, received, settleWithin, SPARE_TIMEOUT_MS, startupWithin, waitFor, within } from "../tests/support.ts";
import { pmsg } from "./messages.ts";
import { processesStarted, resetSpawnCalls } from "../tests/support.ts";
import { alivePids, escapedErrors, start } from "./support.ts";

const CLOSE_WAIT_MS = HANG_MS + 2_000;

describe("rubric/process", () => {
  it("refuses bad options with MCP_INVALID_ARGUMENT in the constructor and starts nothing", () => {
    const good = { executable: process.execPath, args: ["-e", ""] };
    const bad: Array<[string, Record<string, unknown>]> = [
      ['executable: ""', { ...good, executable: "" }],
      ["args: [1]", { ...good, args: [1] }],
      ["timeoutMs: 0", { ...good, timeoutMs: 0 }],
      ["timeoutMs: 1.5", { ...good, timeoutMs: 1.5 }],
      ["closeTimeoutMs: -1", { ...good, closeTimeoutMs: -1 }],
      ["maxLineBytes: 0", { ...good, maxLineBytes: 0 }],
      ["maxPending: 0", { ...good, maxPending: 0 }],
      ["executable: 42", { ...good, executable: 42 }],
      ['args: "x"', { ...good, args: "x" }],
      ['timeoutMs: "1000"', { ...good, timeoutMs: "1000" }],
      ["timeoutMs: NaN", { ...good, timeoutMs: Number.NaN }],
      ["closeTimeoutMs: 0.5", { ...good, closeTimeoutMs: 0.5 }],
      ["maxLineBytes: -1", { ...good, maxLineBytes: -1 }],
      ["maxLineBytes: Infinity", { ...good, maxLineBytes: Number.POSITIVE_INFINITY }],
      ["maxStderrBytes: -1", { ...good, maxStderrBytes: -1 }],
      ["maxStderrBytes: 1.5", { ...good, maxStderrBytes: 1.5 }],
      ['maxStderrBytes: "64"', { ...good, maxStderrBytes: "64" }],
      ["maxPending: -3", { ...good, maxPending: -3 }],
      ["maxPending: 2.5", { ...good, maxPending: 2.5 }],
      ["env: { A: 1 }", { ...good, env: { A: 1 } }],
      ['env: ["A=1"]', { ...good, env: ["A=1"] }],
      ["cwd: 42", { ...good, cwd: 42 }],
      ["options: null", null as unknown as Record<string, unknown>],
    ];
    resetSpawnCalls();
    for (const [option, options] of bad) {
      let actual = pmsg("noError");
      try {
        new McpClient(options as never);
      } catch (error) {
        actual = (error as { code?: string })?.code ?? String(error);
      }
      check(actual === "MCP_INVALID_ARGUMENT", pmsg("invalidOption", { option, actual }));
    }
    // The smallest value the contract allows ("positive integer") is no bad option.
    let refused = "";
    let fresh: McpClient | undefined;
    try {
      fresh = new McpClient({ ...good, timeoutMs: 1 });
    } catch (error) {
      refused = (error as { code?: string })?.code ?? String(error);
    }
    check(refused === "", pmsg("validOptionRefused", { option: "timeoutMs: 1", actual: refused }));
    // Nothing started, nothing heard: the stderr a client reports before any server is empty.
    let stderr: unknown;
    try {
      stderr = fresh!.stderr;
    } catch (error) {
      stderr = pmsg("threw", { error: String(error) });
    }
    const empty = JSON.stringify(stderr) === JSON.stringify({ text: "", truncated: false });
    check(empty, pmsg("stderrBeforeStart", { actual: JSON.stringify(stderr) ?? String(stderr) }));
    const started = processesStarted();
    check(started.length === 0, pmsg("spawnedOnInvalid", { what: started.map((p) => p.command) }));
  });

  it("rejects initialize() with MCP_SPAWN_FAILED for a missing or non-executable program, without crashing", async () => {
    const h = start();
    const notExecutable = join(h.ws.dir, "not-executable.mjs");
    writeFileSync(notExecutable, "process.exit(0)\n");
    chmodSync(notExecutable, 0o644);
    const escaped = escapedErrors();
    try {
      for (const [executable, cause] of [
        [join(h.ws.dir, "no-such-server"), "ENOENT"],
        [notExecutable, "EACCES"],
      ] as const) {
        const client = new McpClient({ executable, args: [], timeoutMs: SPARE_TIMEOUT_MS });
        const label = pmsg("lblInitExecutable", { name: executable.slice(h.ws.dir.length + 1) });
        try {
          const outcome = await settleWithin(client.initialize(), label);
          const error = outcome.status === "rejected" ? outcome.reason : undefined;
          check(
            error?.code === "MCP_SPAWN_FAILED" && error?.cause?.code === cause,
            pmsg("spawnCode", { label, cause, actual: error?.code ?? "resolved", actualCause: error?.cause?.code }),
          );
          check(!client.initialized, pmsg("stillInitialized"));
        } finally {
          await settleWithin(Promise.resolve().then(() => client.close()), "close()").catch(() => {});
        }
      }
      // Let a spawn error event without a listener surface before looking.
      await new Promise((resolve) => setImmediate(resolve));
      check(escaped.errors.length === 0, pmsg("escaped", { when: "MCP_SPAWN_FAILED", error: String(escaped.errors[0]) }));
    } finally {
      escaped.stop();
    }
  });

  it("leaves no process, grandchildren included, once close() resolves after a protocol fault", async () => {
    const h = start({ scenarios: ["non-object", "grandchild", "ignore-sigterm"] }, { closeTimeoutMs: 300 });
    await initialize(h);
    // The answer [1,2,3] is a protocol fault: the client starts stopping the server on its
    // own. Whether it noticed is the 协议 probe's business; close() must wait either way.
    const call = h.client.callTool("echo", { value: "fault" });
    call.catch(() => {});
    await waitFor(() => h.log().some((e) => e.dir === "out" && Array.isArray(e.msg)), pmsg("lblServerSent123"));
    await settleWithin(call, pmsg("lblAnsweredBy123")).catch(() => {});
    await within(h.client.close(), pmsg("lblCloseAfterFault"), CLOSE_WAIT_MS);
    const alive = alivePids(h);
    // The stop the client's fault handling began ends the server a moment later: the orphan
    // probe counts what was alive now, not whatever is left when the test wraps up.
    h.ws.aliveAtClose(alive);
    check(alive.length === 0, pmsg("aliveAfterClose", { which: pmsg("whichCloseAfterFault"), pids: alive.join(", ") }));
  });

  it("leaves no process, grandchildren included, once close() resolves after a failed handshake", async () => {
    const h = start({ scenarios: ["bad-version", "grandchild", "ignore-sigterm"] }, { closeTimeoutMs: 300 });
    const init = startupWithin(h, Promise.resolve().then(() => h.client.initialize()), pmsg("lblInitBadVersion")).catch(() => {});
    await waitFor(() => received(h.log(), "initialize").length > 0 && h.log().some((e) => e.dir === "out"), pmsg("lblServerAnsweringInit"), CLOSE_WAIT_MS);
    await init;
    await within(h.client.close(), pmsg("lblCloseAfterFailedHandshake"), CLOSE_WAIT_MS);
    const alive = alivePids(h);
    check(alive.length === 0, pmsg("aliveAfterClose", { which: pmsg("whichCloseAfterFailedHandshake"), pids: alive.join(", ") }));
  });
});
