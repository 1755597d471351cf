// Whether a grading run hosts the client under test in a process of its own: the lab has a
// host (labs/<lab>/host/proxy.ts) and the grader asked for it (LAB_CLIENT_HOST=1). Then no
// test worker ever loads submission code (the vitest overrides, the gate).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

export function hostedRun(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.LAB_CLIENT_HOST === "1" && env.LAB_VITEST_CONFIG !== undefined && existsSync(join(dirname(env.LAB_VITEST_CONFIG), "host", "proxy.ts"));
}
