// Runs the model-based probe: fast-check draws client options and sequences of operations
// from the grade's seed, runs each sequence against a fresh client and fixture (checking the
// model after every step), and shrinks a failing sequence to a small one. The verdict depends
// only on the seed and the client: runs are bounded by count, every wait is decided by the
// fixture or the client's own deadlines, and shrinking has a budget counted in executions.

import fc from "fast-check";
import { McpClient } from "#submission/src/mcp-client.ts";
import { createFixtureWorkspace, makeTempDir } from "../../../../fixtures/index.ts";
import { settleWithin } from "../../tests/support.ts";
import { Abort, Big, Crash, Echo, Fail, Hold, Release, Stall, type Step, Timeout } from "./calls.ts";
import { BadOptions, Close, Defaults, Init, Inspect, Stderr } from "./lifecycle.ts";
import { checkInvariants, GIVEN_ENV, hangs, Model, ODD_ARGS, Real, Violation, type Dimension, type RunConfig } from "./model.ts";
import { formatReport, type Finding } from "./report.ts";

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

/** The steps every run starts with (not drawn, so never shrunk away). */
const PREFIX = (split: { value: string; cut: number; seed: number }): Step[] => [
  new Init("error"), new Init("exit"), new Init("answer"), new Big(), new Init("answer"), new Inspect(), new Stderr(), new BadOptions(), new Defaults(),
  new Abort("before", "listTools"), new Abort("before", "callTool"), new Echo("tool said no", true, true), new Stall(),
  new Hold(split.value, split.cut), new Release(split.seed),
];

/** The tour's split answer: multi-byte text cut at a drawn byte. */
const splits = fc.record({ value: wideText, cut: fc.integer({ min: 44, max: 80 }), seed: fc.nat(1000) });

const configs: fc.Arbitrary<RunConfig> = fc.record({ maxPending: fc.constantFrom(2, 3), maxLineBytes: fc.constantFrom(2048, 2048, undefined) });

/** The arbitrary of one run: client options and the operations, in order. */
export function runArbitrary(maxCommands: number) {
  return fc.tuple(configs, splits, fc.commands(operations(), { maxCommands, size: "max" }));
}

export interface ModelRunOptions {
  seed: number;
  numRuns: number;
  maxCommands: number;
  /** Executions allowed for shrinking once a run failed (a hang counts as four). */
  shrinkBudget: number;
}

/** The client options a run uses besides its config. */
function clientOptions(config: RunConfig, command: { executable: string; args: string[] }) {
  return { ...command, timeoutMs: 10_000, maxStderrBytes: 512, env: { ...GIVEN_ENV }, ...config };
}

// Runs one sequence against a fresh client and fixture; a broken contract comes back as a Finding.
async function runOnce(config: RunConfig, split: { value: string; cut: number; seed: number }, commands: Iterable<fc.AsyncCommand<Model, Real, boolean>>): Promise<Finding | undefined> {
  const ws = createFixtureWorkspace("lab33-model-");
  const control = makeTempDir("lab33-model-control-");
  // Not named *.json: a hostile client that rewrites every .json file on a command line
  // (corpus/helper-at-import) would otherwise decide the handshakes.
  const controlFile = `${control.dir}/handshake-control`;
  const command = ws.command({ selfDestructMs: 60_000, extraArgs: ["--control", controlFile, "--", ...ODD_ARGS] });
  const steps: string[] = [];
  let real: Real | undefined;
  try {
    real = new Real(new McpClient(clientOptions(config, command) as never), ws, controlFile);
    const model = new Model(config);
    const r = real;
    // Every sequence starts with the same tour: the three handshakes (refused, the server
    // exiting during it, answered), big answers (a protocol fault under the cap), what the server got,
    // pre-aborted calls, an isError result, a stalled stdin, an answer split at a drawn byte, a stderr flood, bad options, the defaults. The
    // drawn operations then meet a ready client (they may close it, crash its server, start another).
    // And every run ends with close(), with whatever is still held and calls made while it runs.
    const checked = [...PREFIX(split), ...commands, new Close()].map((c) => ({
      check: (m: Readonly<Model>) => c.check(m) as boolean,
      run: async (m: Model) => {
        steps.push(c.toString());
        await c.run(m, r);
        await checkInvariants(m, r, c.toString());
      },
      toString: () => c.toString(),
    }));
    await fc.asyncModelRun(() => ({ model, real: r }), checked);
    if (process.env.LAB_MODEL_DEBUG) process.stderr.write(`model run ok ${JSON.stringify(config)}:\n  ${steps.join("\n  ")}\n`);
    return undefined;
  } catch (error) {
    const violation = error instanceof Violation ? error : new Violation("rubric/lifecycle", (error as Error)?.message ?? String(error));
    return { dimension: violation.dimension, needs: violation.needs, message: violation.message, steps, config, log: ws.log() };
  } finally {
    const closed = real ? await settleWithin(Promise.resolve().then(() => real!.client.close()), "close() after the run").catch(() => undefined) : undefined;
    await ws.cleanup({ closeResolved: closed?.status === "fulfilled" });
    control.cleanup();
  }
}

export interface ModelVerdict {
  /** The smallest failing sequence found, or undefined when every run conformed. */
  finding?: Finding & { report: string };
  runs: number;
  executions: number;
}

// Runs the probe. The first failure decides the verdict; shrinking only makes the report smaller.
export async function runModel(options: ModelRunOptions): Promise<ModelVerdict> {
  let last: Finding | undefined;
  let executions = 0;
  let spent = 0;
  const property = fc.asyncProperty(runArbitrary(options.maxCommands), async ([config, split, commands]) => {
    if (last && spent >= options.shrinkBudget) return true; // budget used up: keep what was found
    executions += 1;
    const hangsBefore = hangs.count;
    const finding = await runOnce(config, split, commands);
    if (last) spent += 1 + 3 * (hangs.count - hangsBefore);
    if (!finding) return true;
    last = finding;
    return false;
  });
  const details = await fc.check(property, { seed: options.seed, numRuns: options.numRuns });
  const finding = details.failed && last ? { ...last, report: formatReport(last, options.seed) } : undefined;
  return { finding, runs: details.numRuns, executions };
}

/** The dimension a finding is charged to, for the four rubric tests. */
export type { Dimension };
