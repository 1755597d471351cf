// Every shell command the lesson shows is run here, one test per command, in lesson order,
// with the exit status and output the lesson promises. The grading commands are the slow
// ones (each grades a full submission); the whole file takes a few minutes.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extractCommands, runCommand } from "../../lessons/tools/commands.ts";
import { ROOT } from "../../lessons/tools/snippets.ts";

const commands = extractCommands(readFileSync(join(ROOT, "lessons", "33-mcp-lite", "README.md"), "utf8"));

describe.sequential("lesson 33 commands", () => {
  it("are there to run", () => {
    expect(commands.length).toBeGreaterThanOrEqual(10);
  });

  for (const command of commands) {
    it(`line ${command.line}: \`${command.command}\` exits ${command.exit.join(" or ")}${command.contains ? ` and prints "${command.contains}"` : ""}`, async () => {
      const outcome = await runCommand(command, ROOT);
      const tail = outcome.output.trimEnd().split("\n").slice(-30).join("\n");
      expect(outcome.problem, `${command.command}\n${tail}`).toBeUndefined();
    }, command.timeoutMs + 15_000);
  }
});
