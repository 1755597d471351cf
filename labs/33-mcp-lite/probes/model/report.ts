// The model probe's report: the shrunk sequence of operations, the step that broke the
// contract and why, and the wire trace the fixture recorded, in the learner's language.

import type { LogEntry } from "../../../../fixtures/index.ts";
import { mmsg } from "./messages.ts";
import { SPARE_TIMEOUT_MS } from "../../tests/support.ts";
import type { Dimension, RunConfig } from "./model.ts";

export interface Finding {
  dimension: Dimension;
  /** The TODO the finding leans on (another check grades its cause). */
  needs?: string;
  message: string;
  /** The operations run, in order; the last one failed. */
  steps: string[];
  /** The run's client options; undefined when the failing step used a client of its own. */
  config?: RunConfig;
  log: LogEntry[];
  /** The sequence is one step on a client of its own, run alone: nothing to shrink. */
  minimal?: boolean;
  /** Found after every sequence conformed (the drain check): no sequence to show. */
  afterRuns?: boolean;
}

/** Lines of wire trace shown. */
const TRACE_LINES = 14;

// One message of the log, short: direction, id, method or outcome.
function traceLine(entry: LogEntry): string {
  const arrow = entry.dir === "in" ? "→" : "←";
  // A line that is JSON but no object (the line null) is shown as it was.
  if (entry.msg === null || typeof entry.msg !== "object") return `${arrow} ${JSON.stringify(entry.msg) ?? "undefined"}`;
  const msg = entry.msg;
  const cut = (value: unknown) => {
    const text = JSON.stringify(value) ?? "undefined";
    return text.length > 70 ? `${text.slice(0, 70)}…` : text;
  };
  if (msg.raw !== undefined) return `${arrow} ${cut(msg.raw)}`;
  if (Array.isArray(msg)) return `${arrow} ${cut(msg)}`;
  const id = msg.id === undefined ? "" : `#${JSON.stringify(msg.id)} `;
  if (typeof msg.method === "string") {
    const args = msg.method === "tools/call" ? ` ${msg.params?.name} ${cut(withoutTag(msg.params?.arguments))}` : "";
    return `${arrow} ${id}${msg.method}${args}`;
  }
  if (msg.error !== undefined) return `${arrow} ${id}error ${cut(msg.error)}`;
  return `${arrow} ${id}result ${cut(msg.result)}`;
}

function withoutTag(args: Record<string, unknown> | undefined): Record<string, unknown> {
  const { t: _tag, ...rest } = args ?? {};
  return rest;
}

// The whole report, ready for a check's message.
export function formatReport(finding: Finding, seed: number): string {
  const { steps } = finding;
  const { config } = finding;
  const options = config && JSON.stringify({ maxPending: config.maxPending, maxLineBytes: config.maxLineBytes ?? "(default 1 MiB)", maxStderrBytes: 512, timeoutMs: SPARE_TIMEOUT_MS });
  const numbered = steps.map((step, i) => `${i === steps.length - 1 ? "▶" : " "} ${i + 1}. ${step}`);
  const trace = finding.log.slice(-TRACE_LINES).map((entry) => `    ${traceLine(entry)}`);
  return [
    finding.afterRuns ? mmsg("afterRuns", { seed }) : mmsg("header", { seed, count: steps.length, failing: steps.length }),
    ...(options ? [`  ${mmsg("config", { options })}`] : []),
    ...numbered.map((line) => `  ${line}`),
    `  ${mmsg("violation", { message: finding.message })}`,
    ...(trace.length > 0 ? [`  ${mmsg("trace", { count: trace.length })}`, ...trace] : []),
    `  ${mmsg("replay", { seed })}`,
  ].join("\n");
}
