// Server identity: a sha256 over the normalized configuration (resolved executable path,
// args, cwd (a marker for the private default one), environment) and the content of the executable and of the first argument that
// names a file (the script of `node server.mjs`; later file arguments are usually data the
// server writes, such as a pid file, and must not change its identity). Restart backoff and quarantine are keyed
// by it, so a changed binary or script is a different server. Secret values never enter it
// in clear: a rotated token is not a new server.

import { createHash } from "node:crypto";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { delimiter, isAbsolute, resolve } from "node:path";
import { defaultCwd } from "./defaults.ts";

export interface ServerIdentityConfig {
  executable: string;
  args?: readonly string[];
  cwd?: string;
  env?: Readonly<Record<string, string>>;
  secrets?: readonly string[];
}

const READ_CHUNK_BYTES = 1024 * 1024;
/** Stands for defaultCwd() in the hash. */
const DEFAULT_CWD_MARKER = "[default cwd]";

// Digests keyed by path, invalidated when the file's identity, size or mtime changes.
const digests = new Map<string, { stamp: string; digest: string }>();

// The hash that identifies this server configuration, "sha256:<hex>". Paths are resolved
// as the spawn resolves them: against the configured cwd, or, when the config names none,
// against the private default directory the server then runs in (never the agent's cwd).
// That directory is made anew by every agent process, so it enters the hash as a marker:
// the same config hashes alike in every process.
export function serverHash(config: ServerIdentityConfig): string {
  const cwd = config.cwd === undefined ? defaultCwd() : resolve(config.cwd);
  const executable = resolveExecutable(config.executable, cwd, config.env?.PATH ?? process.env.PATH ?? "");
  const secrets = new Set(config.secrets ?? []);
  const env = Object.entries(config.env ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => [name, secrets.has(value) ? "[secret]" : value]);
  const script = (config.args ?? []).map((arg) => resolve(cwd, arg)).find(isFile);
  const normalized = JSON.stringify({
    executable: executable ?? config.executable,
    executableDigest: executable ? fileDigest(executable) : "missing",
    args: config.args ?? [],
    script: script === undefined ? null : { path: script, digest: fileDigest(script) },
    cwd: config.cwd === undefined ? DEFAULT_CWD_MARKER : cwd,
    env,
  });
  return `sha256:${createHash("sha256").update(normalized).digest("hex")}`;
}

// Finds the program spawn() would start: a path is taken relative to cwd, a bare name is
// looked up in PATH.
export function resolveExecutable(executable: string, cwd: string, path: string): string | undefined {
  if (executable.includes("/") || isAbsolute(executable)) {
    const full = resolve(cwd, executable);
    return isFile(full) ? full : undefined;
  }
  for (const dir of path.split(delimiter)) {
    if (dir === "") continue;
    const full = resolve(cwd, dir, executable);
    if (isFile(full)) return full;
  }
  return undefined;
}

// sha256 of a file's content, read in bounded chunks (a runtime binary is 100 MB).
export function fileDigest(path: string): string {
  const stat = statSync(path);
  const stamp = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  const cached = digests.get(path);
  if (cached?.stamp === stamp) return cached.digest;
  const hash = createHash("sha256");
  const buffer = Buffer.alloc(READ_CHUNK_BYTES);
  const fd = openSync(path, "r");
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) hash.update(buffer.subarray(0, read));
  } finally {
    closeSync(fd);
  }
  const digest = hash.digest("hex");
  digests.set(path, { stamp, digest });
  return digest;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
