// Errors that escape the client under test while the model runs: an uncaught exception or an
// unhandled rejection (a spawn error nobody listens for, a JSON.parse that throws in a stream
// handler). In a grade the client's host sends each one to the test worker, which raises it
// on `process` (host/channel.ts); in-process the client raises it here directly. Left to the
// test runner, an escape is charged to whichever test is running by its title, and the four
// model tests share one, so one defect would fail all four dimensions. While the model runs,
// its own listener takes every escape instead (the runner then leaves it alone: it defers to
// any other listener) and records which steps were under way when it arrived; the run turns
// it into a finding of the step it came from (see run.ts, attribute).

import { mmsg } from "./messages.ts";
import type { Dimension } from "./model.ts";

/** One escaped error and where it arrived. */
export interface Escape {
  kind: "uncaughtException" | "unhandledRejection";
  /** The error's first line, bounded. */
  error: string;
  /** The step of the run's own client that was under way. */
  step: string;
  dimension: Dimension;
  /** The side steps (own client and fixture) that were still running. */
  sides: object[];
}

/** Characters of an escaped error kept for the report. */
const MAX_ERROR_CHARS = 300;

const recorded: Escape[] = [];
const liveSides = new Set<object>();
let current: { step: string; dimension: Dimension } = { step: mmsg("beforeFirstStep"), dimension: "rubric/lifecycle" };
let watchers = 0;

// The error's message (or what it is, when it is not an Error), on one line.
function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name === "Error" ? "" : `${error.name}: `}${error.message}` : String(error);
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > MAX_ERROR_CHARS ? `${flat.slice(0, MAX_ERROR_CHARS)}…` : flat;
}

const record = (kind: Escape["kind"]) => (error: unknown) => {
  recorded.push({ kind, error: describeError(error), ...current, sides: [...liveSides] });
};
const onUncaught = record("uncaughtException");
const onRejection = record("unhandledRejection");

/** Takes escapes until the returned function is called (nested watches share one listener pair). */
export function watchEscapes(): () => void {
  if (watchers++ === 0) {
    process.on("uncaughtException", onUncaught);
    process.on("unhandledRejection", onRejection);
  }
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--watchers > 0) return;
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onRejection);
  };
}

/** The step of the run's own client now under way, and the dimension its sentence belongs to. */
export function stepUnderWay(step: string, dimension: Dimension): void {
  current = { step, dimension };
}

/** A side step's client runs from start() until its side() settles. */
export function sideRunning(side: object, running: boolean): void {
  if (running) liveSides.add(side);
  else liveSides.delete(side);
}

/** The escapes recorded since the last call (each is returned once, never dropped). */
export function takeEscapes(): Escape[] {
  return recorded.splice(0);
}

/** Ends a run at the first step after which an escape was recorded. */
export class Escaped extends Error {
  constructor(readonly escapes: Escape[]) {
    super(`an error escaped the client: ${escapes[0]?.error}`);
    this.name = "Escaped";
  }
}

// Throws Escaped when an escape was recorded since the last look.
export function throwIfEscaped(): void {
  const escapes = takeEscapes();
  if (escapes.length > 0) throw new Escaped(escapes);
}
