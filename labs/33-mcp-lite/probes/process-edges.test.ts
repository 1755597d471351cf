// Rubric probe: 进程 (process), the server's stderr once maxStderrBytes is reached: the client
// keeps reading it (dropping the oldest bytes), so a server that writes a lot to stderr never
// blocks on a full pipe; an exit by signal is reported with its signal, a clean exit with code 0, and the pid goes with
// the process, even while the server's own child still holds its pipes open; and close() asks the server to stop (SIGTERM) before it forces it.

import { existsSync } from "node:fs";
import { describe, it } from "vitest";
import { check, expectCode, initialize, needs, received, rejection, SERVER_TURN_MS, settleWithin, waitFor, within } from "../tests/support.ts";
import { pmsg } from "./messages.ts";
import { killServer, start } from "./support-edges.ts";

describe("rubric/process", () => {
  it("keeps reading the server's stderr after maxStderrBytes is reached", async () => {
    const max = 1_024;
    const h = start({}, { maxStderrBytes: max });
    await initialize(h);
    // The server answers once stderr took every byte: far more than a pipe holds.
    const label = pmsg("lblStderrBytes", { bytes: 4_000_000 });
    const outcome = await settleWithin(h.client.callTool("stderr", { bytes: 4_000_000 }), label);
    const detail = outcome.status === "rejected" ? (outcome.reason?.code ?? String(outcome.reason)) : "";
    check(outcome.status === "fulfilled", pmsg("stderrBlocked", { max, label, detail }));
    await within(h.client.callTool("echo", { value: "still answering" }), pmsg("lblAfterStderrFlood"));
    // What the tail keeps is homework/bounded-stderr's business.
  });

  it("sends SIGTERM before any SIGKILL in close()", async () => {
    // The server ignores SIGTERM and stdin's end and counts the signals it handled in its
    // state file; the grace is a minute, so only the probe ends it, once it heard SIGTERM.
    const h = start({ scenarios: ["ignore-sigterm"] }, { closeTimeoutMs: 60_000 });
    await initialize(h);
    let closed = false;
    // The server running now is the one close() must ask to stop (no other session counts).
    const handled = h.ws.serversNow();
    const closing = Promise.resolve().then(() => h.client.close());
    closing.then(() => (closed = true), () => (closed = true));
    let heard = false;
    // Until the server has handled the signal, the turn is the server's: a process that must be
    // scheduled to run its handler and write its state, seconds on a loaded machine. Only then
    // is close() the client's to settle (once the probe ended the server).
    await waitFor(() => (heard = handled() > 0) || closed, pmsg("lblSigtermOrClosed"), SERVER_TURN_MS);
    if (heard) for (const pid of h.pids()) killServer(pid);
    await settleWithin(closing, "close()");
    check(heard, pmsg("noSigterm"));
  });

  it("reports how the server ended in MCP_PROCESS_EXIT (the signal, or an exit code, 0 included), and has no pid once it exited", async () => {
    // The server's child holds its stdout and stderr open: only the server dies, so the
    // pipes stay open after its exit (the exit, not the pipes' end, is what counts).
    const h = start({ scenarios: ["grandchild"] });
    await initialize(h);
    const held = rejection(h.client.callTool("never", { value: "held" }), pmsg("lblNeverSigkill"));
    await waitFor(() => received(h.log(), "tools/call").length === 1, pmsg("lblServerGotNeverCall"));
    const serverPid = h.pids()[0];
    killServer(serverPid);
    // Reaped (its /proc entry gone): the client's process has seen the exit by now.
    await waitFor(() => serverPid === undefined || !existsSync(`/proc/${serverPid}`), pmsg("lblServerReaped"));
    const pidThen = h.client.pid;
    const error = await needs("exit", async () => {
      const e = await held;
      expectCode(e, "MCP_PROCESS_EXIT", "callTool(never)");
      return e;
    });
    check(error.signal === "SIGKILL" && error.exitCode === null, pmsg("exitSignal", { signal: String(error.signal), exitCode: String(error.exitCode) }));
    check(h.client.pid === undefined && pidThen === undefined, pmsg("pidAfterExit", { pid: String(h.client.pid ?? pidThen) }));
    for (const p of h.pids()) killServer(p);
    // A server that exits by itself with code 0 (a success, and a falsy number): exitCode 0.
    await initialize(h, pmsg("lblInitAfterServerExited"));
    const clean = await needs("exit", async () => {
      const e = await rejection(h.client.callTool("exit", { code: 0 }), "callTool(exit, code 0)");
      expectCode(e, "MCP_PROCESS_EXIT", "callTool(exit, code 0)");
      return e;
    });
    check(clean.exitCode === 0 && clean.signal == null, pmsg("exitCodeZero", { signal: String(clean.signal), exitCode: String(clean.exitCode) }));
    for (const p of h.pids()) killServer(p);
  });
});

