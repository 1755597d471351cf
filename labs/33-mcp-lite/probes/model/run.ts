// Runs the model-based probe: fast-check draws client options and sequences of operations
// from the grade's seed, runs each sequence against a fresh client and fixture (checking the
// model after every step), and shrinks a failing sequence to a small one. The verdict depends
// only on the seed and the client: runs are bounded by count, every wait is decided by the
// fixture or the client's own deadlines, and shrinking has a budget counted in executions.

import fc from "fast-check";
import { McpClient } from "#submission/src/mcp-client.ts";
import { createFixtureWorkspace, makeTempDir, type LogEntry } from "../../../../fixtures/index.ts";
import { settleWithin, SPARE_TIMEOUT_MS } from "../../tests/support.ts";
import { hostEnded } from "../../host/client-side.ts";
import { drainProblem } from "../support-edges.ts";
import { Abort, Big, Crash, Echo, Fail, Hold, Release, Stall, type Step, Timeout } from "./calls.ts";
import { AtCap, BadCallInput, SharedSignal } from "./edges.ts";
import { Escaped, stepUnderWay, takeEscapes, throwIfEscaped, watchEscapes, type Escape } from "./escapes.ts";
import { BadOptions, Close, Defaults, Init, Inspect, Stderr } from "./lifecycle.ts";
import { mmsg } from "./messages.ts";
import { FaultStopJoined, FaultThenClose, HandshakeClosed, HandshakeTimeout, ProtocolFault, SideStep, SpawnMissing, SpawnSpaced } from "./side.ts";
import { ScriptedAnswers } from "./side-answers.ts";
import { CallDeadlines, DefaultGrace } from "./side-deadlines.ts";
import { checkInvariants, cutSideWaits, GIVEN_ENV, hangs, Model, ODD_ARGS, Real, Violation, type Dimension, type RunConfig } from "./model.ts";
import { formatReport, type Finding } from "./report.ts";
import { ExitPipesHeld, PoliteClose, ScriptedFaults, WriteAfterStdinClosed } from "./side-close.ts";

const text = fc.string({ unit: fc.constantFrom("a", "z", " ", "é", "中", "文", "😀", "\n", '"', "\\"), maxLength: 24 });
// At least 24 characters of two to four bytes: a cut at bytes 44–80 of the
// answer line ({"jsonrpc":"2.0","id":N,"result":{"content":" is about 45 bytes) falls in the text.
const wideText = fc.string({ unit: fc.constantFrom("中", "文", "😀", "é"), minLength: 24, maxLength: 60 });

/** Every operation, weighted by repetition (fast-check picks among these uniformly). */
function operations(): Array<fc.Arbitrary<Step>> {
  const init = fc.constantFrom<"answer" | "error" | "exit">("answer", "answer", "answer", "error", "exit").map((mode) => new Init(mode));
  const echo = fc.tuple(text, fc.boolean(), fc.boolean()).map(([v, e, n]) => new Echo(v, e, n));
  const hold = fc.tuple(wideText, fc.option(fc.integer({ min: 44, max: 80 }), { nil: undefined, freq: 4 })).map(([v, cut]) => new Hold(v, cut));
  const release = fc.nat(1000).map((seed) => new Release(seed));
  const crash = fc.tuple(fc.constantFrom<"exit" | "garble">("exit", "garble", "garble"), fc.boolean()).map(([how, again]) => new Crash(how, again));
  return [
    init, echo, echo, fc.constant(new Big()), hold, hold, hold, release, release,
    fc.constantFrom(30, 60).map((ms) => new Timeout(ms)),
    fc.constant(new Abort("before", "callTool")), fc.constant(new Abort("before", "listTools")), fc.constant(new Abort("during", "callTool")),
    fc.constantFrom(-32000, -32602, 7).map((code) => new Fail(code)),
    crash, crash, crash,
    fc.constant(new Stall()),
  ];
}

/**
 * The tour: one fixed sequence, run once per grade before the drawn runs, that visits every
 * sentence of the contract (its answer split at a byte drawn from the seed). Its steps need
 * one another (three timeouts before a call that would find maxPending used up), so it is
 * not shrunk by fast-check; a failing step is tried again alone for the report.
 */
export const TOUR = (split: Split): Step[] => [
  new Init("error"), new Init("exit"), new Init("answer"), new Big(), new Init("answer"), new AtCap(), new Inspect(), new Stderr(), new BadOptions(), new Defaults(),
  new Abort("before", "listTools"), new Abort("before", "callTool"), new Echo("tool said no", true, true), new Fail(-32602), new Timeout(30), new Abort("during", "callTool"), new SharedSignal(),
  new Stall(), new Hold(split.value, split.cut), new Hold("中文😀", undefined), new Release(split.seed),
  new BadCallInput(), new Hold("before the kill", undefined), new Crash("kill", false), new Echo("after the kill", false, false), new Init("answer"), new Crash("exit", true), new Crash("garble", true),
  new SpawnMissing(), new SpawnSpaced(), new PoliteClose(), new ExitPipesHeld(), new WriteAfterStdinClosed(), new FaultThenClose(), new FaultStopJoined(), new HandshakeTimeout(), new HandshakeClosed(), new ProtocolFault("version"), new ProtocolFault("endless"), new ProtocolFault("garbage"), new ScriptedFaults(), new ScriptedAnswers(), new CallDeadlines(), new DefaultGrace(),
];

/** The steps every drawn run starts with (not drawn, so never shrunk away). */
const PREFIX: Step[] = [new Init("answer")];

type Split = { value: string; cut: number; seed: number };

/** The tour's split answer: multi-byte text cut at a drawn byte. */
const splits = fc.record({ value: wideText, cut: fc.integer({ min: 44, max: 80 }), seed: fc.nat(1000) });

/** The tour's client options: room for two held calls and the release; a cap in bytes. */
const TOUR_CONFIG: RunConfig = { maxPending: 3, maxLineBytes: 2048 };

/** The tour's split answer for one seed. */
export function tourSplit(seed: number): Split {
  return fc.sample(splits, { seed, numRuns: 1 })[0]!;
}

const configs: fc.Arbitrary<RunConfig> = fc.record({ maxPending: fc.constantFrom(2, 3), maxLineBytes: fc.constantFrom(2048, 2048, undefined) });

/** The arbitrary of one run: client options and the operations, in order. */
export function runArbitrary(maxCommands: number) {
  return fc.tuple(configs, fc.commands(operations(), { maxCommands, size: "max" }));
}

export interface ModelRunOptions {
  seed: number;
  numRuns: number;
  maxCommands: number;
  /** Executions allowed for shrinking once a run failed (a hang of the run's own client counts as four; a side step's does not: see inSideStep). */
  shrinkBudget: number;
}

/** The client options a run uses besides its config. */
function clientOptions(config: RunConfig, command: { executable: string; args: string[] }) {
  return { ...command, timeoutMs: SPARE_TIMEOUT_MS, maxStderrBytes: 512, env: { ...GIVEN_ENV }, ...config };
}

// Runs one sequence against a fresh client and fixture; a broken contract comes back as a
// Finding, and so does an error that escaped the client (see attribute).
async function runOnce(config: RunConfig, sequence: Step[]): Promise<Finding | undefined> {
  const ws = createFixtureWorkspace("lab33-model-");
  const control = makeTempDir("lab33-model-control-");
  // Not named *.json: a hostile client that rewrites every .json file on a command line
  // (corpus/helper-at-import) would otherwise decide the handshakes.
  const controlFile = `${control.dir}/handshake-control`;
  const command = ws.command({ selfDestructMs: 60_000, extraArgs: ["--control", controlFile, "--", ...ODD_ARGS] });
  const steps: string[] = [];
  let real: Real | undefined;
  let finding: Finding | undefined;
  let escapes: Escape[] = [];
  let log: LogEntry[] = [];
  // The side steps run beside the others from the start (each has its own client and fixture).
  const sides = sequence.filter((step): step is SideStep => step instanceof SideStep).map((step) => step.start());
  try {
    real = new Real(new McpClient(clientOptions(config, command) as never), ws, controlFile, command);
    await checkedRun(real, new Model(config), [...sequence, new Close()], steps);
  } catch (error) {
    // An escape recorded by then is what went wrong first, whatever the step then saw.
    escapes = error instanceof Escaped ? error.escapes : takeEscapes();
    const violation = error instanceof Violation ? error : new Violation("rubric/lifecycle", (error as Error)?.message ?? String(error));
    // A side client's violation shows that client's trace; its options are in its step.
    const side = violation.log !== undefined;
    if (escapes.length === 0) finding = { dimension: violation.dimension, needs: violation.needs, message: violation.message, steps, config: side ? undefined : config, log: violation.log ?? ws.log() };
  } finally {
    const closed = real ? await settleWithin(Promise.resolve().then(() => real!.client.close()), "close() after the run").catch(() => undefined) : undefined;
    // A run that failed no longer needs its side steps' verdicts: their waits end at once. (The
    // sides all started with the run, so one under way when a later error escaped was under way
    // at the first too: the escapes taken so far already name every suspect.)
    if (finding || escapes.length > 0) cutSideWaits(true);
    await Promise.all(sides).finally(() => cutSideWaits(false));
    // Whatever escaped before the last close() answered has arrived (the host keeps one order).
    if (!finding) escapes.push(...takeEscapes());
    if (escapes.length > 0) log = ws.log();
    await ws.cleanup({ closeResolved: closed?.status === "fulfilled" });
    control.cleanup();
  }
  return finding ?? (escapes.length > 0 ? attribute(escapes, sequence, steps, config, log) : undefined);
}

// Runs the steps in order against the model, checking it after every step, and ends the run
// at the first step after which an error had escaped the client.
async function checkedRun(r: Real, model: Model, sequence: Step[], steps: string[]): Promise<void> {
  const timings: string[] = [];
  const checked = sequence.map((c) => ({
    check: (m: Readonly<Model>) => c.check(m) as boolean,
    run: async (m: Model) => {
      steps.push(c.toString());
      stepUnderWay(c.toString(), c.escapeDimension);
      const began = Date.now();
      await c.run(m, r);
      await checkInvariants(m, r, c.toString());
      throwIfEscaped();
      if (process.env.LAB_MODEL_DEBUG) timings.push(`${Date.now() - began} ms ${c.toString().slice(0, 70)}`);
    },
    toString: () => c.toString(),
  }));
  await fc.asyncModelRun(() => ({ model, real: r }), checked);
  if (process.env.LAB_MODEL_DEBUG) process.stderr.write(`model run ok ${JSON.stringify(model.config)}:\n  ${timings.join("\n  ")}\n`);
}

// An escaped error's finding. A side step that was running when it arrived and lets an error
// escape again when run alone is charged (its own client: nothing else can have caused it);
// else the step of the run's own client during which the first escape arrived.
async function attribute(escapes: Escape[], sequence: Step[], steps: string[], config: RunConfig, log: LogEntry[]): Promise<Finding> {
  const suspects = [...new Set(escapes.flatMap((e) => e.sides))] as SideStep[];
  suspects.sort((a, b) => sequence.indexOf(a) - sequence.indexOf(b));
  for (const side of suspects) {
    const alone = await side.alone();
    const first = alone.escapes[0];
    if (first) return { dimension: side.escapeDimension, needs: side.escapeNeeds, message: escapedMessage(side.toString(), first), steps: [side.toString()], log: alone.log, minimal: true };
  }
  const first = escapes[0]!;
  const at = steps.lastIndexOf(first.step);
  return { dimension: first.dimension, message: escapedMessage(first.step, first), steps: at >= 0 ? steps.slice(0, at + 1) : steps, config, log };
}

function escapedMessage(step: string, escape: Escape): string {
  return mmsg("escaped", { step, kind: mmsg(escape.kind === "uncaughtException" ? "uncaught" : "rejection"), error: escape.error });
}

export interface ModelVerdict {
  /** The smallest failing sequence found, or undefined when every run conformed. */
  finding?: Finding & { report: string };
  runs: number;
  executions: number;
}

// Runs the tour once. A failure is made smaller by trying the failing step with fewer and
// fewer of the steps before it (1, 2, 4, … of them, after a handshake unless it brings its
// own client), within the shrink budget; the first that fails alike is the report's sequence.
async function runTour(seed: number, budget: number): Promise<{ finding?: Finding; executions: number }> {
  const tour = TOUR(tourSplit(seed));
  const finding = await runOnce(TOUR_CONFIG, tour);
  if (!finding) return { executions: 1 };
  // A finding that ended the client's host (its code crashed it or exhausted its memory)
  // is not shrunk: every smaller try would end another host, seconds each, and teach nothing more.
  if (finding.minimal || hostEnded()) return { finding, executions: 1 };
  const at = finding.steps.length - 1;
  const failed = tour[at];
  let executions = 1;
  let spent = 0;
  for (let before = 0; failed && before < at && spent < budget; before = Math.max(1, before * 2)) {
    const tail = tour.slice(at - before, at + 1);
    const attempt = failed instanceof SideStep && before === 0 ? tail : tail[0] instanceof Init ? tail : [new Init("answer"), ...tail];
    executions += 1;
    const hangsBefore = hangs.count;
    const smaller = await runOnce(TOUR_CONFIG, attempt);
    spent += 1 + 3 * (hangs.count - hangsBefore);
    if (smaller && smaller.dimension === finding.dimension && smaller.steps.length < finding.steps.length) return { finding: smaller, executions };
  }
  return { finding, executions };
}

// Runs the probe with the model taking every error that escapes the client meanwhile
// (escapes.ts): each becomes a finding of the run it arrived in, or of the probe when it
// arrived after the last run had looked.
export async function runModel(options: ModelRunOptions): Promise<ModelVerdict> {
  const stop = watchEscapes();
  try {
    const verdict = await search(options);
    const left = takeEscapes()[0];
    if (verdict.finding) return verdict;
    const finding: Finding | undefined = left ? { dimension: left.dimension, message: escapedMessage(left.step, left), steps: [left.step], log: [] } : await drained();
    return finding ? { ...verdict, finding: { ...finding, report: formatReport(finding, options.seed) } } : verdict;
  } finally {
    stop();
  }
}

/** How long the client's process may take to exit once the model closed every client. */
const DRAIN_BOUND_MS = 5_000;

// Checked from outside the client's process, once every run conformed and every client the
// model made is closed: that process must then exit on its own (nothing the client made keeps
// its event loop running), however the client's own counters were fooled. Where the client
// runs in the test's process there is no outside to watch it from: no finding.
async function drained(): Promise<Finding | undefined> {
  let problem: string | undefined;
  try {
    problem = await drainProblem(DRAIN_BOUND_MS);
  } catch (error) {
    // The host ended before the check could ask it to (what ended it is the message).
    problem = (error as Error).message;
  }
  if (!problem) return undefined;
  return { dimension: "rubric/lifecycle", message: problem, steps: [mmsg("allClosed", {})], log: [], minimal: true, afterRuns: true };
}

// The tour, then the drawn runs. The first failure decides the verdict; shrinking only makes
// the report smaller.
async function search(options: ModelRunOptions): Promise<ModelVerdict> {
  const tour = await runTour(options.seed, options.shrinkBudget);
  if (tour.finding) return { finding: { ...tour.finding, report: formatReport(tour.finding, options.seed) }, runs: 1, executions: tour.executions };
  if (options.numRuns === 0) return { runs: 1, executions: tour.executions };
  let last: Finding | undefined;
  let executions = tour.executions;
  let spent = 0;
  const property = fc.asyncProperty(runArbitrary(options.maxCommands), async ([config, commands]) => {
    if (last && spent >= options.shrinkBudget) return true; // budget used up: keep what was found
    executions += 1;
    const hangsBefore = hangs.count;
    const finding = await runOnce(config, [...PREFIX, ...(commands as Iterable<Step>)]);
    if (last) spent += 1 + 3 * (hangs.count - hangsBefore);
    if (!finding) return true;
    last = finding;
    if (hostEnded()) spent = options.shrinkBudget; // as in runTour: no shrinking a host's end
    return false;
  });
  const details = await fc.check(property, { seed: options.seed, numRuns: options.numRuns });
  const finding = details.failed && last ? { ...last, report: formatReport(last, options.seed) } : undefined;
  return { finding, runs: 1 + details.numRuns, executions };
}

/** The dimension a finding is charged to, for the four rubric tests. */
export type { Dimension };
