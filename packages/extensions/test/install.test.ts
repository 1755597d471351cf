// The package as an agent team would adopt it: `npm pack --workspace
// @coding-agent/extensions` gives a tarball that a plain Node project installs (offline,
// from the npm cache, with a lockfile cut from this repository's) and imports without tsx
// or TypeScript; nothing in it reaches outside the package; its declarations type-check;
// and the README's opening example runs as written against a real registry server.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { consumerLock, rootDependencies } from "./offline-lock.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL("../", import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8")) as { name: string; version: string; dependencies: Record<string, string> };

let project: string;

function run(command: string, args: string[], cwd: string) {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false" }, timeout: 120_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status ?? result.signal}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

// The first ```js block of the package README: the agent-side example.
function readmeExample(): string {
  const readme = readFileSync(join(PACKAGE_DIR, "README.md"), "utf8");
  const match = /```js\n([\s\S]*?)```/.exec(readme);
  if (!match) throw new Error("the README has no ```js example");
  return match[1]!;
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)]));
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), "ext-consumer-"));
  const packed = JSON.parse(run("npm", ["pack", "--workspace", PACKAGE.name, "--pack-destination", project, "--json"], ROOT)) as Array<{ filename: string }>;
  const file = packed[0]!.filename;
  const registry = run("npm", ["config", "get", "registry"], ROOT).trim(); // the registry `npm ci` filled the cache from
  const lock = consumerLock(ROOT, { name: PACKAGE.name, version: PACKAGE.version, file, dependencies: PACKAGE.dependencies }, ["@modelcontextprotocol/server-memory"], registry);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module", dependencies: rootDependencies(lock) }, null, 2));
  writeFileSync(join(project, "package-lock.json"), JSON.stringify(lock, null, 2));
  run("npm", ["ci", "--offline", "--ignore-scripts"], project);
  return () => rmSync(project, { recursive: true, force: true });
}, 180_000);

describe("the packed package", () => {
  it("holds compiled JavaScript and declarations only, with no import outside the package", () => {
    const installed = join(project, "node_modules", PACKAGE.name);
    const shipped = files(installed).map((file) => relative(installed, file)).sort();
    expect(shipped).toContain("dist/index.js");
    expect(shipped).toContain("dist/index.d.ts");
    expect(shipped).toContain("dist/reference/mcp-client.js");
    expect(shipped.filter((file) => !file.startsWith("dist/") && !["README.md", "package.json"].includes(file))).toEqual([]);
    expect(shipped.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);
    // Every relative import names a shipped .js file; every other one is node: or the one dependency.
    for (const file of shipped.filter((f) => f.endsWith(".js") || f.endsWith(".d.ts"))) {
      const text = readFileSync(join(installed, file), "utf8");
      for (const [, spec] of text.matchAll(/(?:from |import\()["']([^"']+)["']/g)) {
        if (spec!.startsWith(".")) expect(shipped, `${file} imports ${spec}`).toContain(join(dirname(file), spec!));
        else expect(spec, file).toMatch(/^(node:|ajv$)/);
      }
    }
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest).toMatchObject({ exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" } }, dependencies: { ajv: "8.20.0" } });
    expect(manifest.private).toBeUndefined();
  });

  it("names its license and the folder of the repository its source lives in", () => {
    const manifest = JSON.parse(readFileSync(join(project, "node_modules", PACKAGE.name, "package.json"), "utf8")) as Record<string, unknown>;
    // The repository has no LICENSE file and no license of its own: the package claims none.
    expect(manifest.license).toBe("UNLICENSED");
    expect(manifest.repository).toEqual({ type: "git", directory: "packages/extensions" });
  });

  it("states in its declarations the default cwd the code uses", () => {
    const declarations = readFileSync(join(project, "node_modules", PACKAGE.name, "dist", "mcp-client.d.ts"), "utf8");
    const options = /export interface McpClientOptions extends [^{]*\{([\s\S]*?)\n\}/.exec(declarations)?.[1] ?? "";
    const doc = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*cwd\?: string;/.exec(options)?.[1] ?? "";
    expect(doc).toMatch(/Default: a private, empty directory/);
    expect(doc).toMatch(/defaultCwd\(\)/);
    expect(doc).not.toMatch(/the client's cwd/);
  });

  it("imports with plain Node: the root and each subpath of the exports map", () => {
    const script = [
      'const root = await import("@coding-agent/extensions");',
      'const client = await import("@coding-agent/extensions/mcp-client");',
      'const manager = await import("@coding-agent/extensions/manager");',
      "console.log(JSON.stringify([typeof root.McpManager, typeof root.McpClient, typeof root.McpError, typeof root.adaptTools, typeof root.ServerManager, client.McpClient === root.McpClient, manager.McpManager === root.McpManager, root.CLIENT_INFO, typeof root.McpManager.prototype[Symbol.asyncDispose], typeof root.McpClient.prototype[Symbol.asyncDispose]]));",
    ].join("\n");
    const out = run(process.execPath, ["--input-type=module", "-e", script], project);
    expect(JSON.parse(out)).toEqual(["function", "function", "function", "function", "function", true, true, { name: PACKAGE.name, version: PACKAGE.version }, "function", "function"]);
  });

  it("type-checks a TypeScript consumer against its declarations", () => {
    writeFileSync(
      join(project, "check.ts"),
      [
        'import { McpManager, McpError, type ToolDefinition, type McpManagerMetrics } from "@coding-agent/extensions";',
        "const manager = new McpManager({ servers: { s: { executable: \"node\", tools: [{ name: \"t\" }], maxPermission: \"write\" } } });",
        "export const tools: Promise<ToolDefinition[]> = manager.tools(\"s\");",
        "export const metrics: McpManagerMetrics = manager.metrics();",
        "export const dispose: () => Promise<void> = () => manager[Symbol.asyncDispose]();",
        "export const isError = (e: unknown): e is McpError => e instanceof McpError && e.availability !== \"backoff\";",
      ].join("\n"),
    );
    const tsconfig = { compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: false, types: ["node"], typeRoots: [join(ROOT, "node_modules", "@types")] }, files: ["check.ts"] };
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(tsconfig));
    run(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", project], project);
  });

  it("runs the README's opening example as written", () => {
    writeFileSync(join(project, "example.mjs"), readmeExample());
    const out = run(process.execPath, ["example.mjs"], project);
    expect(out).toContain("memory/create_entities (write)");
    expect(out).toContain("memory/read_graph (read)");
    expect(out).toContain('"name":"ada"');
    expect(out).toContain("MCP_INVALID_ARGUMENT");
    expect(out).toMatch(/"ok":2/);
  });
});
