// Two more of the model's side steps (own client, own server; see side.ts): close() on a
// server that stays until the model ends it, and a scripted server for answers the fixture
// never sends (an initialize result without serverInfo, the line null).

import { isAlive } from "../../../../fixtures/index.ts";
import { received, SPARE_TIMEOUT_MS, waitFor } from "../../tests/support.ts";
import { scriptedCommand } from "../scripted-server.ts";
import { killServer, pidsRecorded, settled } from "../support-edges.ts";
import { expectOutcome } from "./expect.ts";
import { noted } from "../../tests/messages.ts";
import { mmsg } from "./messages.ts";
import { expectNoServer, expectThat, settle, Violation, type Dimension } from "./model.ts";
import { closedLeavingNothing, expectInitialized, SideStep } from "./side.ts";

// A server that ignores SIGTERM and stdin's end, with a grace of a minute: only the model ends
// it, so what close() does before the server is gone is ordered by the fixture, never by time.
// A call pending when close() is called rejects with CLIENT_CLOSED while the server is still
// there; the server hears SIGTERM before anything forces it (then the model ends it); and
// neither of two concurrent close() calls resolves while it is alive.
export class PoliteClose extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/process";
  }
  async side(): Promise<void> {
    await this.withSide({ closeTimeoutMs: 60_000, timeoutMs: SPARE_TIMEOUT_MS }, { scenarios: ["ignore-sigterm"] }, async (side) => {
      await expectInitialized(side);
      const held = settled(side.client.callTool("never", {}));
      await waitFor(() => received(side.ws.log(), "tools/call").length > 0, mmsg("waitNever")).catch(() => {});
      // What was alive as each close() resolved, while the model had not ended the server yet.
      let killed = false;
      const aliveAt: Array<number[] | undefined> = [undefined, undefined];
      // Signals the server running now handled (the pool's count for its session; a real
      // server's report): the one close() must ask to stop, whatever else the client started.
      const handled = side.ws.serversNow();
      const closing = [0, 1].map((i) => settled(Promise.resolve().then(() => side.client.close())).finally(() => (aliveAt[i] = killed ? [] : side.ws.pids().filter(isAlive))));
      // Latched: the server rewrites its report after every change (its note on stderr is one),
      // and a read while it does so finds no report at all.
      let heard = false;
      let closedFirst = false;
      const hearing = () => (heard ||= handled() > 0);
      try {
        expectOutcome(await settle(held, mmsg("thePendingCall")), { code: "CLIENT_CLOSED" }, "rubric/lifecycle", mmsg("pendingAtClose"));
        await waitFor(() => hearing() || aliveAt.some(Boolean), mmsg("waitSigterm")).catch(() => {});
        // One more call: its refusal comes back after whatever the two close() calls settled before it.
        await settle(settled(Promise.resolve().then(() => side.client.initialize())), mmsg("initAfterClose"));
      } finally {
        closedFirst = aliveAt.some(Boolean) && !hearing();
        killed = true;
        // Heard or not, the model ends the server now, so close() can resolve.
        for (const pid of side.ws.pids()) killServer(pid);
      }
      for (const [i, close] of closing.entries()) {
        expectOutcome(await settle(close, `close() #${i + 1}`), { value: undefined }, "rubric/process", mmsg("closeAfterModelKill", { n: i + 1 }));
        const left = aliveAt[i] ?? [];
        expectThat(left.length === 0, "rubric/process", "alive", { step: mmsg("resolved", { step: `close() #${i + 1}` }), pids: left.join(", ") });
      }
      // Only a close() that resolved before the server handled any signal shows a SIGKILL first
      // (a wait that ran out with neither proves nothing, so it is no finding).
      expectThat(heard || !closedFirst, "rubric/process", "noSigterm", { step: "close()" });
    });
  }
  toString(): string {
    return noted(mmsg("ignoresSigterm", { options: "{ closeTimeoutMs: 60000 }", steps: mmsg("closeTwice", { call: 'callTool("never")' }) }), mmsg("noteModelEnds"));
  }
}

/** What the scripted server answers initialize with, in the first phase: everything but serverInfo. */
const NO_SERVER_INFO = { protocolVersion: "2025-06-18", capabilities: { tools: {} } };
const NULL_CAPABILITIES = { protocolVersion: "2025-06-18", capabilities: null, serverInfo: { name: "scripted", version: "1.0.0" } };
const LATER_VERSION = { protocolVersion: "2099-01-01", capabilities: { tools: {} }, serverInfo: { name: "scripted", version: "1.0.0" } };

// A scripted server, four times: its first initialize answer lacks serverInfo, the second's
// capabilities are null, the third names a protocol version later than any the client speaks
// (each handshake must fail with MCP_PROTOCOL_ERROR and stop its server); the last server
// answers initialize, then every tools/call with the line null (a protocol fault too, never an
// error escaping the client).
export class ScriptedFaults extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async side(): Promise<void> {
    // The command is the same for both servers; each reads the answers written before it starts.
    await this.withSide({ timeoutMs: SPARE_TIMEOUT_MS }, (ws) => scriptedCommand(ws, { initialize: NO_SERVER_INFO }), async (side) => {
      await protocolFault(side, INIT_LABEL, () => side.client.initialize());
      // Each on a fresh server: capabilities that are null, and a protocol version later than any the client speaks.
      for (const [initialize, step] of [[NULL_CAPABILITIES, NULL_CAPS_LABEL], [LATER_VERSION, LATER_LABEL]] as const) {
        scriptedCommand(side.ws, { initialize });
        await protocolFault(side, step, () => side.client.initialize());
      }
      scriptedCommand(side.ws, { "tools/call": { raw: ["null"] } });
      await expectInitialized(side, mmsg("freshServer"));
      await protocolFault(side, CALL_LABEL, () => side.client.callTool("echo", { value: "x" }));
    });
  }
  toString(): string {
    return [INIT_LABEL, NULL_CAPS_LABEL, LATER_LABEL].reduceRight((next, first) => mmsg("thenSemicolon", { first, next }), CALL_LABEL);
  }
}

// The call ends in MCP_PROTOCOL_ERROR, initialized is false, and the server is stopped.
export async function protocolFault(side: { client: { initialized: boolean }; ws: { pids(): number[] } }, what: string, call: () => Promise<unknown>): Promise<void> {
  expectOutcome(await settle(settled(Promise.resolve().then(call)), what), { code: "MCP_PROTOCOL_ERROR" }, "rubric/handshake", what);
  expectThat(side.client.initialized === false, "rubric/handshake", "initialized", { step: what, actual: side.client.initialized, expected: false });
  await faultStopped(side, what);
}

// After a protocol fault: the server is stopped (waited for), and then initialized is false.
export async function faultStopped(side: { client: { initialized: boolean }; ws: { pids(): number[] } }, what: string): Promise<void> {
  await expectNoServer(side.ws, what).catch(() => {
    throw new Violation("rubric/handshake", mmsg("alive", { step: mmsg("faultStopsServer", { what }), pids: side.ws.pids().filter(isAlive).join(", ") }));
  });
  expectThat(side.client.initialized === false, "rubric/handshake", "initialized", { step: what, actual: side.client.initialized, expected: false });
}

const INIT_LABEL = noted("initialize()", mmsg("noteNoServerInfo"));
const NULL_CAPS_LABEL = noted("initialize()", mmsg("noteNullCapabilities"));
const LATER_LABEL = noted("initialize()", mmsg("noteLaterVersion"));
const CALL_LABEL = noted(mmsg("initAndCall"), mmsg("noteNullLine"));

// A server whose own child holds its stdout and stderr open dies by the model's SIGKILL (the
// child lives on, and ignores SIGTERM): the exit is what counts, not the pipes' end, so the
// pending call rejects with MCP_PROCESS_EXIT; what the server left in its process group is the
// client's to end (the seed: killing the parent alone leaves orphans), so once close()
// resolved neither process is alive.
export class ExitPipesHeld extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/process";
  }
  async side(): Promise<void> {
    await this.withSide({ timeoutMs: SPARE_TIMEOUT_MS }, { scenarios: ["stubborn-grandchild"] }, async (side) => {
      await expectInitialized(side);
      // The child records its pid once it ignores SIGTERM (the server recorded its own first).
      await pidsRecorded(side.ws, 2);
      const held = settled(side.client.callTool("never", {}));
      await waitFor(() => received(side.ws.log(), "tools/call").length > 0, mmsg("waitNever")).catch(() => {});
      killServer(side.ws.pids()[0]);
      const label = mmsg("killOnly");
      expectOutcome(await settle(held, label), { code: "MCP_PROCESS_EXIT" }, "rubric/process", label);
      await closedLeavingNothing(side, mmsg("closeAfterKill"));
    });
  }
  toString(): string {
    return mmsg("pipesHeldStep", { kill: mmsg("killOnly") });
  }
}

/** Every code of CONTRACT §1's McpErrorCode union. */
const CONTRACT_CODES = ["MCP_INVALID_ARGUMENT", "MCP_SPAWN_FAILED", "MCP_NOT_INITIALIZED", "MCP_PROTOCOL_ERROR", "MCP_ERROR", "MCP_TIMEOUT", "MCP_ABORTED", "MCP_BUSY", "MCP_PROCESS_EXIT", "CLIENT_CLOSED"];

// A server that closes its stdin as it answers: the next call's write fails after the pipe
// took it (EPIPE), and that call must end (any code of the contract) long before its deadline.
export class WriteAfterStdinClosed extends SideStep {
  async side(): Promise<void> {
    await this.withSide({ timeoutMs: SPARE_TIMEOUT_MS }, {}, async (side) => {
      await expectInitialized(side);
      const last = noted('callTool("echo", { closeStdin: true })', mmsg("noteStopsReading"));
      expectOutcome(await settle(settled(side.client.callTool("echo", { value: "last", closeStdin: true })), last), { value: { content: "last" } }, "rubric/lifecycle", last);
      const next = noted('callTool("echo")', mmsg("noteWriteFails", { ms: SPARE_TIMEOUT_MS }));
      expectOutcome(await settle(settled(side.client.callTool("echo", { value: "into a closed pipe" })), next), { code: CONTRACT_CODES }, "rubric/lifecycle", next);
    });
  }
  toString(): string {
    return noted(mmsg("then", { first: 'callTool("echo", { closeStdin: true })', next: 'callTool("echo")' }), mmsg("noteSecondWriteFails", { options: `{ timeoutMs: ${SPARE_TIMEOUT_MS} }` }));
  }
}
