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

// Validates this layer's options, then the reference client's (so a bad option fails with
// this package's McpError), and refuses a secret that would travel in argv.
export function prepare(options: McpClientOptions): Prepared {
  if (options === null || typeof options !== "object") invalid("options must be an object");
  const { secrets = [], runId = randomUUID(), onTrace, budget, redactResults, ...given } = options;
  if (!Array.isArray(secrets)) invalid("secrets must be an array of non-empty strings");
  secrets.forEach((secret, index) => {
    if (typeof secret !== "string" || secret === "") invalid(`secrets[${index}] must be a non-empty string`);
  });
  const redactor = new Redactor(secrets);
  if (redactResults !== undefined && typeof redactResults !== "boolean") invalid("redactResults must be a boolean");
  const base = withDefaults(given, redactor);
  if (typeof runId !== "string" || runId === "") invalid("runId must be a non-empty string");
  if (onTrace !== undefined && typeof onTrace !== "function") invalid("onTrace must be a function");
  if (budget !== undefined) {
    const problem = budgetProblem(budget);
    if (problem) invalid(problem);
  }
  try {
    resolveOptions(base);
  } catch (error) {
    if (error instanceof BaseMcpError) invalid(redactor.redact(error.message));
    throw error;
  }
  const args = base.args ?? [];
  for (const secret of secrets) {
    if (base.executable.includes(secret)) invalid("executable contains a secret; pass secrets to the server through env");
    const index = args.findIndex((arg) => arg.includes(secret));
    if (index >= 0) invalid(`args[${index}] contains a secret; pass secrets to the server through env, never in argv`);
  }
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

// This package's defaults on top of the reference client's: its own name as clientInfo, a
// private empty working directory (never the agent's own, which is usually the user's
// repository), and notifications redacted before they reach the agent.
function withDefaults(options: BaseMcpClientOptions, redactor: Redactor): BaseMcpClientOptions {
  const { onNotification } = options;
  if (onNotification !== undefined && typeof onNotification !== "function") invalid("onNotification must be a function");
  return {
    ...options,
    clientInfo: options.clientInfo ?? { ...CLIENT_INFO },
    cwd: options.cwd ?? defaultCwd(),
    ...(onNotification ? { onNotification: (notification) => onNotification(redactor.redactValue(notification) as ServerNotification) } : {}),
  };
}

function invalid(message: string): never {
  throw new McpError("MCP_INVALID_ARGUMENT", message, { phase: "request" });
}
