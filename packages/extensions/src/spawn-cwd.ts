// Node's spawn() reports a working directory that does not exist as ENOENT of the
// executable ("spawn node ENOENT"), and one that is not a directory as a bare ENOTDIR: both
// send whoever reads the error looking for the wrong thing. After such a failure the cwd is
// checked, and when it is the culprit the message names it (the code stays
// MCP_SPAWN_FAILED, the cause stays the spawn error).

import { statSync } from "node:fs";

// What is wrong with `cwd` as a working directory, or undefined when it is usable (or the
// spawn error cannot have come from it).
function cwdProblem(cwd: string | undefined, spawnCode: unknown): string | undefined {
  if (cwd === undefined || (spawnCode !== "ENOENT" && spawnCode !== "ENOTDIR")) return undefined;
  let isDirectory: boolean;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return `working directory ${JSON.stringify(cwd)} does not exist`;
    if (code === "ENOTDIR") return `working directory ${JSON.stringify(cwd)} is not a directory (a part of its path is a file)`;
    return undefined;
  }
  return isDirectory ? undefined : `working directory ${JSON.stringify(cwd)} is not a directory`;
}

// The message of a reference client error, reworded when a failed spawn was the working
// directory's fault: Node blames the executable for that, this names the directory.
export function spawnMessage(error: { code: string; message: string; cause?: unknown }, cwd: string | undefined, executable: string): string {
  if (error.code !== "MCP_SPAWN_FAILED") return error.message;
  const spawnCode = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  const problem = cwdProblem(cwd, spawnCode);
  if (problem === undefined) return error.message;
  return `could not start ${JSON.stringify(executable)}: ${problem} (spawn reported ${String(spawnCode)})`;
}
