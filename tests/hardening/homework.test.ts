// The homework tier checks itself both ways: the reference solution passes every
// homework/... block, the starter fails each one (except checks a correct-looking
// UnsafeClient happens to satisfy, pinned here so a change shows up as a diff).

import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const LAB = join(ROOT, "labs", "33-mcp-lite");
const FILES = readdirSync(join(LAB, "homework")).filter((f) => f.endsWith(".test.ts")).map((f) => `homework/${f}`);

interface Outcome {
  block: string;
  title: string;
  status: string;
}

// Runs the homework files against one folder in a child vitest and reads its JSON report.
async function runHomework(target: "solution" | "starter"): Promise<Outcome[]> {
  const dir = mkdtempSync(join(tmpdir(), "lab33-homework-"));
  const report = join(dir, "report.json");
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [join(ROOT, "scripts", "lab-test.mjs"), target, "--reporter=json", `--outputFile=${report}`],
        { cwd: ROOT, env: { ...process.env, LAB_TEST_FILES: FILES.join(","), FORCE_COLOR: "0" }, stdio: "ignore" },
      );
      child.once("error", reject);
      child.once("exit", () => resolve());
    });
    const json = JSON.parse(readFileSync(report, "utf8")) as {
      testResults: Array<{ assertionResults: Array<{ ancestorTitles: string[]; title: string; status: string }> }>;
    };
    return json.testResults.flatMap((file) =>
      file.assertionResults.map((a) => ({ block: a.ancestorTitles[0] ?? "", title: a.title, status: a.status })),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function byBlock(outcomes: Outcome[]): Record<string, string> {
  const blocks: Record<string, string> = {};
  for (const o of outcomes) blocks[o.block] = blocks[o.block] === "failed" || o.status === "failed" ? "failed" : "passed";
  return blocks;
}

describe("homework tier", () => {
  it("has five homework/... blocks; the solution passes them all and the starter fails them all", async () => {
    const [solution, starter] = await Promise.all([runHomework("solution"), runHomework("starter")]);
    const ids = ["homework/bounded-stderr", "homework/cancel-notice", "homework/notifications", "homework/stress-100", "homework/version-negotiation"];
    // One assertion over both, so a failure shows the whole picture.
    expect({ solution: byBlock(solution), starter: byBlock(starter) }).toEqual({
      solution: Object.fromEntries(ids.map((id) => [id, "passed"])),
      starter: Object.fromEntries(ids.map((id) => [id, "failed"])),
    });
  });
});
