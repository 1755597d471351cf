// The model's operations on a client of their own, for sentences the run's client cannot
// show without losing its server: an executable that does not exist, close() right after a
// protocol fault on a server that ignores SIGTERM, a handshake that times out, a line that
// never ends, an unsupported protocol version, a line that is not JSON (more in
// side-close.ts). Each starts its fixture, checks the contract, and closes its client, pass
// or fail; a violation carries its own wire trace.

import { join } from "node:path";
import { McpClient } from "#submission/src/mcp-client.ts";
import { createFixtureWorkspace, isAlive, makeTempDir, type FixtureCommand, type FixtureOptions, type FixtureWorkspace, type LogEntry } from "../../../../fixtures/index.ts";
import { received, SPARE_TIMEOUT_MS, startupWithin, waitFor } from "../../tests/support.ts";
import { Step } from "./calls.ts";
import { sideRunning, takeEscapes, type Escape } from "./escapes.ts";
import { killServer, settled } from "../support-edges.ts";
import { spacedPath } from "../support.ts";
import { expectOutcome } from "./expect.ts";
import { noted } from "../../tests/messages.ts";
import { mmsg } from "./messages.ts";
import { expectNoServer, expectThat, inSideStep, settle, Violation, type Dimension, type Model, type Real } from "./model.ts";

type Side = { client: InstanceType<typeof McpClient>; ws: FixtureWorkspace };

// initialize() on a side client, with the start-up hang detector; a hang is an outcome.
async function initialized(side: Side, label: string) {
  return startupWithin(side.ws, settled(Promise.resolve().then(() => side.client.initialize())), label).catch((error: Error) => ({ status: "rejected" as const, reason: { code: `(${error.message})` } }));
}

/** initialize() on a side client, which must resolve (a rubric/handshake finding when it does not). */
export async function expectInitialized(side: Side, step = "initialize()"): Promise<void> {
  const init = await initialized(side, "initialize()");
  expectThat(init.status === "fulfilled", "rubric/handshake", "outcome", { step, expected: "resolve", actual: init.status === "rejected" ? init.reason?.code : "" });
}

/** close() on a side client: it must resolve, and once it has, no process the fixture recorded is alive. */
export async function closedLeavingNothing(side: Side, step: string): Promise<void> {
  const closed = await settle(settled(Promise.resolve().then(() => side.client.close()).then(() => side.ws.pids().filter(isAlive))), "close()");
  expectOutcome(closed.status === "fulfilled" ? { status: "fulfilled", value: undefined } : closed, { value: undefined }, "rubric/process", "close()");
  const left = closed.status === "fulfilled" ? (closed.value as number[]) : [];
  expectThat(left.length === 0, "rubric/process", "alive", { step, pids: left.join(", ") });
}

// A side step's base: it neither reads nor changes the run's model, so a run may start it
// early (start()) and it runs beside the other steps; its verdict is taken at its place in
// the sequence, so the report is the same as if it had run there. An error escaping while it
// runs cannot be told from one of the run's own client: alone() runs it again by itself.
export abstract class SideStep extends Step {
  private started?: Promise<unknown>;
  /** The side fixture's wire trace of the last time the step ran. */
  private lastLog: LogEntry[] = [];
  /** Starts the step's own client and fixture now; run() then waits for what it found. */
  start(): Promise<unknown> {
    sideRunning(this, true);
    this.started = inSideStep.run(true, () => this.side()).then(() => undefined, (error: unknown) => ({ error }));
    void this.started.then(() => sideRunning(this, false));
    return this.started;
  }
  async run(_m: Model, _r: Real): Promise<void> {
    const outcome = (await (this.started ?? this.start())) as { error: unknown } | undefined;
    this.started = undefined;
    if (outcome) throw outcome.error;
  }
  /** Runs the step once more with nothing beside it: the errors that escaped meanwhile, and its trace. */
  async alone(): Promise<{ escapes: Escape[]; log: LogEntry[] }> {
    this.lastLog = [];
    await inSideStep.run(true, () => this.side()).catch(() => undefined);
    return { escapes: takeEscapes(), log: this.lastLog };
  }
  abstract side(): Promise<void>;

  // Runs body with a fresh client on a fresh fixture; closes both afterwards, and gives a
  // violation (and alone()) the side fixture's log.
  // The server is the fixture with these options, or what a function of the workspace starts.
  protected async withSide(options: Record<string, unknown>, fixture: FixtureOptions | ((ws: FixtureWorkspace) => FixtureCommand), body: (side: Side) => Promise<void>): Promise<void> {
    const ws = createFixtureWorkspace("lab33-model-side-");
    const command = typeof fixture === "function" ? fixture(ws) : ws.command({ selfDestructMs: 60_000, ...fixture });
    const client = new McpClient({ ...command, ...options } as never);
    try {
      await body({ client, ws });
    } catch (error) {
      if (error instanceof Violation) error.log ??= ws.log();
      throw error;
    } finally {
      const outcome = await settle(settled(Promise.resolve().then(() => client.close())), mmsg("closeSide"));
      this.lastLog = ws.log();
      await ws.cleanup({ closeResolved: outcome.status === "fulfilled" });
    }
  }
}

export class SpawnMissing extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/process";
  }
  // A program that cannot start is TODO(process)'s (MCP_SPAWN_FAILED), not close()'s, which
  // owns the model's other process findings.
  override get escapeNeeds(): string {
    return "process";
  }
  async side(): Promise<void> {
    const dir = makeTempDir("lab33-model-missing-");
    const client = new McpClient({ executable: join(dir.dir, "no-such-server"), timeoutMs: SPARE_TIMEOUT_MS } as never);
    try {
      // No server ever runs, so no server turn: the plain hang deadline applies.
      const outcome = await settle(settled(Promise.resolve().then(() => client.initialize())), "initialize()");
      expectOutcome(outcome, { code: "MCP_SPAWN_FAILED" }, "rubric/process", "initialize()");
      const cause = outcome.status === "rejected" ? outcome.reason?.cause?.code : undefined;
      expectThat(cause === "ENOENT", "rubric/process", "outcome", { step: `cause.code`, expected: "ENOENT", actual: String(cause) });
    } catch (error) {
      if (error instanceof Violation) {
        error.log ??= [];
        error.needs ??= this.escapeNeeds;
      }
      throw error;
    } finally {
      await settle(settled(Promise.resolve().then(() => client.close())), mmsg("closeNoServer"));
      dir.cleanup();
    }
  }
  toString(): string {
    return 'new McpClient({ executable: "<dir>/no-such-server" }).initialize()';
  }
}

// The server's program through a path with a space in it, as an agent's configured server may
// have: the client starts it as given (a client that splits the path at spaces, "npx server"
// style, starts nothing), and a call reaches it.
export class SpawnSpaced extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/process";
  }
  async side(): Promise<void> {
    const spaced = (ws: FixtureWorkspace) => {
      const command = ws.command({ selfDestructMs: 60_000 });
      return { ...command, executable: spacedPath(ws.dir, command.executable) };
    };
    await this.withSide({ timeoutMs: SPARE_TIMEOUT_MS }, spaced, async (side) => {
      const init = await initialized(side, "initialize()");
      const cause = init.status === "rejected" ? String(init.reason?.cause?.code ?? "") : "";
      if (init.status === "rejected" && init.reason?.code === "MCP_SPAWN_FAILED") throw new Violation("rubric/process", mmsg("spawnGiven", { step: this.toString(), executable: SPACED, cause }));
      expectThat(init.status === "fulfilled", "rubric/process", "outcome", { step: this.toString(), expected: "resolve", actual: init.status === "rejected" ? init.reason?.code : "" });
      const echoed = await settle(settled(side.client.callTool("echo", { value: "spaced" })), 'callTool("echo")');
      expectOutcome(echoed, { value: { content: "spaced" } }, "rubric/process", 'callTool("echo")');
    });
  }
  toString(): string {
    return `new McpClient({ executable: "${SPACED}" }).initialize()`;
  }
}
const SPACED = "<dir>/server folder/<program>";

// initialize(), then a call answered [1,2,3]: MCP_PROTOCOL_ERROR, and the fault begins stopping the server.
async function faulted(side: Side): Promise<void> {
  await expectInitialized(side);
  const garbled = await settle(settled(side.client.callTool("echo", { value: "x", garble: true })), 'callTool("echo", { garble: true })');
  expectOutcome(garbled, { code: "MCP_PROTOCOL_ERROR" }, "rubric/handshake", `callTool("echo", { garble: true })`);
}

// A protocol fault began stopping a server that ignores SIGTERM; close() must wait for the
// SIGKILL that the client's own closeTimeoutMs decides (a client that never sends one never
// resolves: a hang, whatever the load).
export class FaultThenClose extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async side(): Promise<void> {
    await this.withSide({ closeTimeoutMs: 300, timeoutMs: SPARE_TIMEOUT_MS }, { scenarios: ["ignore-sigterm"] }, async (side) => {
      await faulted(side);
      await closedLeavingNothing(side, mmsg("resolved", { step: "close()" }));
    });
  }
  toString(): string {
    return mmsg("ignoresSigterm", { options: "{ closeTimeoutMs: 300 }", steps: mmsg("garbleThenClose", { call: 'callTool("echo", { garble: true })' }) });
  }
}

// The same, with a grace of a minute (the server ignores SIGTERM and stdin's end): close() must
// join the stop the fault began and resolve only once the server is gone. Only the model ends
// the server, once a call made after close() came back (a close() that did not wait has
// resolved by then), so the order is the host's and the fixture's, never a deadline's. With
// the 300 ms grace alone, a close() that did not wait was caught only while it resolved within
// those 300 ms of the fault (close-skips-fault-stop, missed once on a loaded machine).
export class FaultStopJoined extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async side(): Promise<void> {
    await this.withSide({ closeTimeoutMs: 60_000, timeoutMs: SPARE_TIMEOUT_MS }, { scenarios: ["ignore-sigterm"] }, async (side) => {
      await faulted(side);
      // What was alive as close() resolved, while the model had not ended the server yet.
      let killed = false;
      let aliveAtClose: number[] | undefined;
      const closing = settled(Promise.resolve().then(() => side.client.close())).finally(() => (aliveAtClose = killed ? [] : side.ws.pids().filter(isAlive)));
      try {
        // One more call: its refusal comes back after whatever close() settled before it (the
        // host keeps one order), so a close() that did not wait has resolved by then.
        await settle(settled(Promise.resolve().then(() => side.client.initialize())), mmsg("initAfterClose"));
      } finally {
        killed = true;
        for (const pid of side.ws.pids()) killServer(pid);
      }
      expectOutcome(await settle(closing, "close()"), { value: undefined }, "rubric/process", "close()");
      const left = aliveAtClose ?? [];
      expectThat(left.length === 0, "rubric/process", "alive", { step: mmsg("resolved", { step: "close()" }), pids: left.join(", ") });
    });
  }
  toString(): string {
    return noted(mmsg("ignoresSigterm", { options: "{ closeTimeoutMs: 60000 }", steps: mmsg("garbleThenClose", { call: 'callTool("echo", { garble: true })' }) }), mmsg("noteModelEndsAfterCall"));
  }
}

// A server that never answers initialize: the client's own deadline ends the handshake, which
// must stop the child and never have sent notifications/initialized.
export class HandshakeTimeout extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async side(): Promise<void> {
    await this.withSide({ timeoutMs: 300 }, { scenarios: ["hang-initialize"] }, async (side) => {
      const init = await initialized(side, "initialize()");
      expectOutcome(init, { code: "MCP_TIMEOUT" }, "rubric/handshake", "initialize()");
      await expectNoServer(side.ws, "initialize()").catch(() => {
        throw new Violation("rubric/handshake", mmsg("alive", { step: mmsg("failedHandshakeStops", { step: "initialize()" }), pids: side.ws.pids().filter(isAlive).join(", ") }));
      });
      const early = side.ws.log().some((e) => e.dir === "in" && e.msg?.method === "notifications/initialized");
      expectThat(!early, "rubric/handshake", "earlyNotice", { step: "initialize()" });
    });
  }
  toString(): string {
    return noted("initialize()", mmsg("noteHandshakeTimeout", { options: "{ timeoutMs: 300 }" }));
  }
}

// A server that never answers initialize, and a client with time to spare: while the handshake
// runs (the server started and read the request) the client has the running server's pid;
// close() then ends the handshake (it rejects), stops the server and leaves nothing.
export class HandshakeClosed extends SideStep {
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async side(): Promise<void> {
    await this.withSide({ timeoutMs: SPARE_TIMEOUT_MS }, { scenarios: ["hang-initialize"] }, async (side) => {
      const init = settled(Promise.resolve().then(() => side.client.initialize()));
      // The server records its pid before it reads anything; the request read, the turn is the client's.
      await waitFor(() => received(side.ws.log(), "initialize").length > 0, mmsg("waitInitRead")).catch(() => {});
      const pending = received(side.ws.log(), "initialize").length > 0;
      const pid = side.client.pid;
      expectThat(!pending || typeof pid === "number", "rubric/handshake", "pidDuringHandshake", { step: "initialize()", actual: String(pid) });
      await closedLeavingNothing(side, mmsg("resolved", { step: "close()" }));
      const outcome = await settle(init, "initialize()");
      expectThat(outcome.status === "rejected", "rubric/handshake", "outcome", { step: mmsg("initClosed"), expected: "reject", actual: outcome.status });
    });
  }
  toString(): string {
    return noted(mmsg("then", { first: "initialize()", next: "client.pid, close()" }), mmsg("noteHandshakeClosed", { ms: SPARE_TIMEOUT_MS }));
  }
}

/** Side clients whose server breaks the handshake or the framing: each must end in MCP_PROTOCOL_ERROR, server stopped. */
const FAULTS: Record<"version" | "endless" | "garbage", { fixture: FixtureOptions; on: "initialize" | "call"; label: string }> = {
  version: { fixture: { scenarios: ["bad-version"] }, on: "initialize", label: noted("initialize()", mmsg("noteBadVersion")) },
  endless: { fixture: { scenarios: ["oversized"], floodBytes: 400_000 }, on: "call", label: noted('callTool("echo")', mmsg("noteEndless")) },
  garbage: { fixture: { scenarios: ["stdout-pollution"] }, on: "call", label: noted('callTool("echo")', mmsg("noteGarbage")) },
};

export class ProtocolFault extends SideStep {
  constructor(readonly kind: keyof typeof FAULTS) {
    super();
  }
  override get escapeDimension(): Dimension {
    return "rubric/handshake";
  }
  async side(): Promise<void> {
    const fault = FAULTS[this.kind];
    await this.withSide({ timeoutMs: SPARE_TIMEOUT_MS, maxLineBytes: 2048 }, fault.fixture, async (side) => {
      const init = await initialized(side, "initialize()");
      if (fault.on === "call") {
        expectThat(init.status === "fulfilled", "rubric/handshake", "outcome", { step: `initialize()`, expected: "resolve", actual: init.status === "rejected" ? init.reason?.code : "" });
      }
      const what = fault.on === "initialize" ? "initialize()" : 'callTool("echo")';
      const outcome = fault.on === "initialize" ? init : await settle(settled(side.client.callTool("echo", { value: "x" })), what);
      expectOutcome(outcome, { code: "MCP_PROTOCOL_ERROR" }, "rubric/handshake", what);
      expectThat(side.client.initialized === false, "rubric/handshake", "initialized", { step: what, actual: side.client.initialized, expected: false });
      await expectNoServer(side.ws, what).catch(() => {
        throw new Violation("rubric/handshake", mmsg("alive", { step: mmsg("faultStops"), pids: side.ws.pids().filter(isAlive).join(", ") }));
      });
    });
  }
  toString(): string {
    return FAULTS[this.kind].label;
  }
}
