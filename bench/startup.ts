// The fixture server's start-up beside bare `node -e ""`: wall time from spawn to exit with
// stdin already at EOF (the server exits as soon as it has started), interleaved so drift
// on a noisy machine hits both alike, plus the fixture's spawn-to-initialize-answer time.

import { spawn, spawnSync } from "node:child_process";
import { FIXTURE_SERVER } from "../fixtures/index.ts";
import { median } from "./stats.ts";

export interface StartupSample {
  /** node -e "" spawn to exit, ms (median of this run's samples). */
  nodeMs: number;
  /** node fixtures/mcp-server.mjs spawn to exit, ms. */
  fixtureMs: number;
  /** node fixtures/mcp-server.mjs spawn to the initialize answer, ms. */
  fixtureAnswerMs: number;
}

const INITIALIZE = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1.0.0" } },
})}\n`;

// Times one process from spawn to exit, in ms; throws if it fails.
function timeToExit(args: string[]): number {
  const began = performance.now();
  const result = spawnSync(process.execPath, args, { input: "", stdio: ["pipe", "ignore", "ignore"], timeout: 10_000 });
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited ${result.status ?? result.signal}`);
  return performance.now() - began;
}

// Times the fixture from spawn to its first stdout bytes (the initialize answer), in ms.
function timeToAnswer(): Promise<number> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const child = spawn(process.execPath, [FIXTURE_SERVER], { stdio: ["pipe", "pipe", "ignore"] });
    let elapsed: number | undefined;
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.stdout.once("data", () => {
      elapsed = performance.now() - began;
      child.stdin.end();
    });
    child.on("error", reject);
    child.on("exit", () => {
      clearTimeout(timer);
      if (elapsed === undefined) reject(new Error("the fixture never answered initialize"));
      else resolve(elapsed);
    });
    child.stdin.write(INITIALIZE);
  });
}

// One run: `samples` interleaved pairs plus `samples` answer timings, each reduced to its median.
export async function measureStartup(samples: number): Promise<StartupSample> {
  const node: number[] = [];
  const fixture: number[] = [];
  const answer: number[] = [];
  for (let i = 0; i < samples; i++) {
    node.push(timeToExit(["-e", ""]));
    fixture.push(timeToExit([FIXTURE_SERVER]));
  }
  for (let i = 0; i < samples; i++) answer.push(await timeToAnswer());
  return { nodeMs: median(node), fixtureMs: median(fixture), fixtureAnswerMs: median(answer) };
}

// Warms the file cache once for both commands, so the first run is not the odd one out.
export function warmStartup(): void {
  timeToExit(["-e", ""]);
  timeToExit([FIXTURE_SERVER]);
}
