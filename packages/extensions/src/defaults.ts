// The package's own defaults for every server it starts: the clientInfo it introduces
// itself with, and the working directory a server gets when its config names none.

import { mkdtempSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Sent as clientInfo unless the options name another: this package, at its version. */
export const CLIENT_INFO: Readonly<{ name: string; version: string }> = Object.freeze({ name: "@coding-agent/extensions", version: "0.1.0" });

let cwd: string | undefined;

// A private, empty directory (mode 0700) made once per process, the working directory of
// every server whose config names none: a server must not inherit the agent's cwd (often
// the user's repository, where a hostile server could read every relative path). Removed
// when the process exits if it is still empty; a server that wrote into it leaves it behind
// for whoever wants to look.
export function defaultCwd(): string {
  if (cwd === undefined) {
    cwd = mkdtempSync(join(tmpdir(), "coding-agent-mcp-"));
    process.once("exit", releaseDefaultCwd);
  }
  return cwd;
}

/** Removes the default directory now if it is still empty (the next server gets a new one). For
 *  hosts whose processes end without an "exit" event (a test worker that is killed). */
export function releaseDefaultCwd(): void {
  if (cwd === undefined) return;
  const made = cwd;
  cwd = undefined;
  process.removeListener("exit", releaseDefaultCwd);
  try {
    rmdirSync(made);
  } catch {
    // Not empty, or already gone: left as it is.
  }
}
