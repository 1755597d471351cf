// The model of CONTRACT §1 the model-based probe checks a client against: what the client
// should be (initialized, closed, which calls are pending, whether a server should run) and
// the real client beside it (through the §1 API only) with the fixture's records. Every
// finding is a Violation charged to the rubric dimension whose sentence it breaks.

import { AsyncLocalStorage } from "node:async_hooks";
import { closeSync, constants, openSync, writeFileSync } from "node:fs";
import { delimiter } from "node:path";
import { isAlive, type FixtureWorkspace, type LogEntry } from "../../../../fixtures/index.ts";
import { abortListeners, settleWithin, timerSnapshot, waitFor, type Settled } from "../../tests/support.ts";
import { mmsg, type ModelMessage } from "./messages.ts";

export type Dimension = "rubric/id-matching" | "rubric/lifecycle" | "rubric/process" | "rubric/handshake";
export const DIMENSIONS: Dimension[] = ["rubric/id-matching", "rubric/lifecycle", "rubric/process", "rubric/handshake"];

/** A broken sentence of the contract, charged to one dimension. */
export class Violation extends Error {
  /** The TODO this finding leans on, when another check grades its cause. */
  needs?: string;
  /** The wire trace of the fixture the violation happened on, when not the run's own. */
  log?: LogEntry[];
  constructor(readonly dimension: Dimension, message: string) {
    super(message);
    this.name = "Violation";
  }
}

// Throws a Violation unless the condition holds.
export function expectThat(ok: unknown, dimension: Dimension, key: ModelMessage, params: Record<string, unknown>): asserts ok {
  if (!ok) throw new Violation(dimension, mmsg(key, params));
}

/** Client options of one run (the rest are the contract's defaults). */
export interface RunConfig {
  maxPending: number;
  /** Undefined: the default, 1 MiB. */
  maxLineBytes?: number;
}

export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;
/** Arguments every model server gets after "--": what a shell or a trim would change. */
export const ODD_ARGS = ["", "  padded  ", "two words", "中文", "$HOME"];
/**
 * The env the run's client is given: a variable of its own, and a PATH of its own that must win
 * over the allowlist's (env is added on top of it). The client with every option at its default
 * (lifecycle.ts, Defaults) shows the allowlist's PATH instead.
 */
export const GIVEN_ENV: Record<string, string> = { LAB33_MODEL_GIVEN: "given", PATH: [process.env.PATH, "/lab33-model-given-path"].filter(Boolean).join(delimiter) };
/** Variables a server may get beyond the configured env. */
export const PLATFORM_ENV = new Set(["PATH", "Path", "PATHEXT", "SystemRoot", "SystemDrive", "windir", "ComSpec", "TEMP", "TMP"]);

/** A held echo the model expects to be answered later. */
export interface Held {
  tag: string;
  value: string;
  isError: boolean;
}

export class Model {
  initialized = false;
  closed = false;
  /** A server the client started should be running. */
  serverRunning = false;
  /** Calls held by the fixture, in the order they were made. */
  held: Held[] = [];
  /** tools/list requests that may have reached the server. */
  lists = 0;
  /** A server that broke protocol is still going away (slowly, on purpose): the next initialize() must wait for it. */
  dying = false;
  /** That server ignores SIGTERM and stdin end until the model ends it (a fault followed at once by a handshake). */
  lingering = false;
  /** Tags of calls that must never reach the server, with why. */
  readonly unwritten = new Map<string, { why: string; dimension: Dimension }>();
  constructor(readonly config: RunConfig) {}
  get lineCap(): number {
    return this.config.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }
}

export interface ClientUnderTest {
  readonly pendingCount: number;
  readonly pid: number | undefined;
  readonly initialized: boolean;
  initialize(): Promise<unknown>;
  listTools(options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<unknown>;
  callTool(name: string, args?: Record<string, unknown>, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<unknown>;
  close(): Promise<void>;
}

/** The real side: the client, its fixture workspace, and what is still in flight. */
export class Real {
  readonly held = new Map<string, Promise<Settled<unknown>>>();
  private tags = 0;
  /** The client's timers alive before the run (a leak is counted against them). */
  readonly timersBefore = timerSnapshot();
  constructor(readonly client: ClientUnderTest, readonly ws: FixtureWorkspace, private readonly controlFile: string, readonly command: { executable: string; args: string[] }) {}
  /** A fresh tag for the next call, so the log tells which call reached the server. */
  tag(): string {
    this.tags += 1;
    return `m${this.tags}`;
  }
  /** Decides the next server's handshake (the fixture reads this when initialize arrives). */
  handshake(mode: "answer" | "error" | "exit"): void {
    // Never through a link or into a FIFO the client's host planted in the folder (it may add
    // files there): the write fails instead, and so does the run.
    const fd = openSync(this.controlFile, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o640);
    try {
      writeFileSync(fd, JSON.stringify({ initialize: mode }));
    } finally {
      closeSync(fd);
    }
  }
  log(): LogEntry[] {
    return this.ws.log();
  }
  pids(): number[] {
    return this.ws.pids();
  }
}

/** Waits that ended at the hang deadline so far (a hang costs more of the shrink budget). */
export const hangs = { count: 0 };

// Waits (with the hang detector) for an outcome made by settled(); a hang is an outcome too.
// Set while a run that already failed waits for its side steps to end: their outcomes are no
// longer used (the run's finding, or its escapes, were taken before), so their waits end at
// once and they go on to close their clients and clean up. Never set while a side step runs
// alone (attribution) or while a run is still deciding.
let sidesCut = false;
export function cutSideWaits(on: boolean): void {
  sidesCut = on;
}

/**
 * Set in a side step's own code (SideStep). Its hangs are not charged to the shrink budget:
 * a side step runs beside the run's steps, so whether its hang came before or after the run
 * failed (and its waits were cut) depends on timing, and the budget must not.
 */
export const inSideStep = new AsyncLocalStorage<true>();

export async function settle(outcome: Promise<Settled<unknown>>, label: string, ms?: number, options?: { stillness?: boolean }): Promise<Settled<unknown>> {
  const side = inSideStep.getStore() === true;
  try {
    const waited = await settleWithin(outcome, label, ms, { ...options, until: () => side && sidesCut });
    if (waited.status === "fulfilled") return waited.value;
    return { status: "rejected", reason: waited.reason };
  } catch (error) {
    if (!side) hangs.count += 1;
    return { status: "rejected", reason: { code: `(${(error as Error).message})` } };
  }
}

// The checks that hold after every step, whatever it was.
export async function checkInvariants(m: Model, r: Real, step: string): Promise<void> {
  expectThat(r.client.pendingCount === m.held.length, "rubric/lifecycle", "pending", { step, actual: r.client.pendingCount, expected: m.held.length });
  expectThat(r.client.initialized === m.initialized, "rubric/lifecycle", "initialized", { step, actual: r.client.initialized, expected: m.initialized });
  const log = r.log();
  const ids = log.filter((e) => e.dir === "in" && e.msg?.id !== undefined && typeof e.msg?.method === "string").map((e) => e.msg.id);
  const increasing = ids.every((id, i) => Number.isSafeInteger(id) && (i === 0 || id > ids[i - 1]));
  expectThat(increasing, "rubric/id-matching", "ids", { ids: JSON.stringify(ids.slice(-12)) });
  for (const entry of log) {
    const tag = entry.dir === "in" ? entry.msg?.params?.arguments?.t : undefined;
    const banned = typeof tag === "string" ? m.unwritten.get(tag) : undefined;
    if (banned) throw new Violation(banned.dimension, mmsg("wrote", { step, why: banned.why }));
  }
  const lists = log.filter((e) => e.dir === "in" && e.msg?.method === "tools/list").length;
  expectThat(lists <= m.lists, "rubric/lifecycle", "wrote", { step, why: mmsg("whyAbortedList") });
  if (!m.serverRunning && !m.dying) await expectNoServer(r, step);
}

// Every server the client started is gone, or goes within the hang deadline (the client stops it).
export async function expectNoServer(r: { pids(): number[] }, step: string): Promise<void> {
  const alive = () => r.pids().filter(isAlive);
  await waitFor(() => alive().length === 0, mmsg("waitServersStopping")).catch(() => {
    throw new Violation("rubric/process", mmsg("alive", { step, pids: alive().join(", ") }));
  });
}

// No abort listener is left on a signal whose call ended.
export function expectNoListeners(signal: AbortSignal, step: string): void {
  const count = abortListeners(signal);
  expectThat(count === 0, "rubric/lifecycle", "listeners", { step, count });
}
