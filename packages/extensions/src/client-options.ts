// The production client's options: this layer's own (secrets, runId, onTrace, budget,
// redactResults) checked, then the reference client's (so a bad option fails with this
// package's McpError), this package's defaults filled in, and a secret that would travel in
// argv refused.

import { randomUUID } from "node:crypto";
import { McpError as BaseMcpError } from "../../../labs/33-mcp-lite/solution/src/errors.ts";
import {
  resolveOptions,
  type McpClientOptions as BaseMcpClientOptions,
  type ServerNotification,
} from "../../../labs/33-mcp-lite/solution/src/mcp-client.ts";
import { budgetProblem } from "./budget.ts";
import { CLIENT_INFO, defaultCwd } from "./defaults.ts";
import { McpError } from "./errors.ts";
import type { McpClientOptions } from "./mcp-client.ts";
import { Redactor } from "./redact.ts";
import { Telemetry } from "./telemetry.ts";

export interface Prepared {
  base: BaseMcpClientOptions;
  runId: string;
  telemetry: Telemetry;
  redactor: Redactor;
  identity: { executable: string; args: string[]; cwd?: string; env: Record<string, string>; secrets: string[] };
}

// Validates the options and fills in this package's defaults.
export function prepare(options: McpClientOptions): Prepared {
  const { given, secrets, redactor } = checkOptions(options);
  const { runId = randomUUID(), onTrace } = options;
  const base = withDefaults(given, redactor);
  const args = base.args ?? [];
  return {
    base,
    runId,
    telemetry: new Telemetry(runId, onTrace, redactor),
    redactor,
    identity: {
      executable: base.executable,
      args: [...args],
      // The configured cwd: the default private directory differs per process, not per server.
      ...(given.cwd === undefined ? {} : { cwd: given.cwd }),
      env: { ...(base.env ?? {}) },
      secrets: [...secrets],
    },
  };
}

/** The options without this layer's own fields: what the reference client is given. */
type GivenOptions = Omit<McpClientOptions, "secrets" | "runId" | "onTrace" | "budget" | "redactResults">;

// Checks every option without side effects (no default directory made, nothing started):
// this layer's, then the reference client's (so a bad option fails with this package's
// McpError), and refuses a secret that would travel in argv. The constructor and the
// manager's check of each server config both use it, so the two cannot disagree.
export function checkOptions(options: McpClientOptions): { given: GivenOptions; secrets: readonly string[]; redactor: Redactor } {
  if (options === null || typeof options !== "object") invalid("options must be an object");
  const { secrets = [], runId, onTrace, budget, redactResults, ...given } = options;
  if (!Array.isArray(secrets)) invalid("secrets must be an array of non-empty strings");
  secrets.forEach((secret, index) => {
    if (typeof secret !== "string" || secret === "") invalid(`secrets[${index}] must be a non-empty string`);
  });
  const redactor = new Redactor(secrets);
  if (redactResults !== undefined && typeof redactResults !== "boolean") invalid("redactResults must be a boolean");
  if (given.onNotification !== undefined && typeof given.onNotification !== "function") invalid("onNotification must be a function");
  if (runId !== undefined && (typeof runId !== "string" || runId === "")) invalid("runId must be a non-empty string");
  if (onTrace !== undefined && typeof onTrace !== "function") invalid("onTrace must be a function");
  if (budget !== undefined) {
    const problem = budgetProblem(budget);
    if (problem) invalid(problem);
  }
  try {
    // The defaults withDefaults() fills in, as values of the right shape (an absent cwd
    // becomes the private directory, which is not made here).
    resolveOptions({ ...given, clientInfo: given.clientInfo ?? { ...CLIENT_INFO }, ...(given.cwd == null ? { cwd: undefined } : {}) });
  } catch (error) {
    if (error instanceof BaseMcpError) invalid(redactor.redact(error.message));
    throw error;
  }
  for (const secret of secrets) {
    if (given.executable.includes(secret)) invalid("executable contains a secret; pass secrets to the server through env");
    const index = (given.args ?? []).findIndex((arg) => arg.includes(secret));
    if (index >= 0) invalid(`args[${index}] contains a secret; pass secrets to the server through env, never in argv`);
  }
  return { given, secrets, redactor };
}

// This package's defaults on top of the reference client's: its own name as clientInfo, a
// private empty working directory (never the agent's own, which is usually the user's
// repository), and notifications redacted before they reach the agent.
function withDefaults(options: BaseMcpClientOptions, redactor: Redactor): BaseMcpClientOptions {
  const { onNotification } = options;
  return {
    ...options,
    clientInfo: options.clientInfo ?? { ...CLIENT_INFO },
    cwd: options.cwd ?? defaultCwd(),
    ...(onNotification ? { onNotification: (notification) => onNotification(redactor.redactValue(notification) as ServerNotification) } : {}),
  };
}

function invalid(message: string): never {
  throw new McpError("MCP_INVALID_ARGUMENT", message, { phase: "configure" });
}
