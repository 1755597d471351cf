// What the walk of the student edition runs and what it expects: the commands the edition's
// texts name (```bash blocks and inline `npm …` spans), and per stage of the learner's work the
// exit status each must have and text its output must (or must not) hold.

import type { LessonCommand } from "../../lessons/tools/commands.ts";

export type Stage = "starter" | "half-done" | "finished";

export interface WalkCommand {
  /** The command as the text names it (without a trailing comment). */
  command: string;
  /** What the walk runs: the same, with a loaded machine's hang deadline for the grader. */
  run: string;
}

/** Hang deadline the walk gives the grader, in ms (LAB_HANG_MS covers the rest). */
const GRADE_HANG_MS = 5000;

// Inline commands of a text: `npm …`, `npx …`, `node …`, optionally after VAR=value.
function inlineCommands(text: string): string[] {
  return [...text.matchAll(/`((?:[A-Z_]+=\S+ )*(?:npm|npx|node) [^`]+)`/g)].map((m) => m[1]!);
}

// Every distinct runnable command the texts name, in order of first mention. Placeholders
// (`<name>`) and commands of another package manager are not runnable as they stand.
export function walkCommands(texts: Array<{ file: string; text: string }>, extract: (markdown: string) => LessonCommand[]): WalkCommand[] {
  const seen = new Set<string>();
  const out: WalkCommand[] = [];
  for (const { text } of texts) {
    // The English lessons show their commands in ```sh blocks (the Chinese ones carry the run markers).
    const blocks = extract(text.replace(/^```sh\s*$/gm, "```bash"));
    for (const raw of [...blocks.map((c) => c.command), ...inlineCommands(text)]) {
      const command = raw.replace(/\s+#.*$/, "").trim();
      if (seen.has(command) || /[<>…]|\bpnpm\b/.test(command)) continue;
      seen.add(command);
      out.push({ command, run: withHangDeadline(command) });
    }
  }
  return out;
}

// `npm run grade …` with the walk's hang deadline added.
function withHangDeadline(command: string): string {
  if (!/^npm run grade(\s|$)/.test(command)) return command;
  return command.includes(" -- ") ? `${command} --hang-ms ${GRADE_HANG_MS}` : `${command} -- --hang-ms ${GRADE_HANG_MS}`;
}

export interface Expectation {
  exit: number;
  contains: string[];
  absent: string[];
}

const TEXT = {
  zh: {
    notYet: "还没通过是正常的",
    next33: { starter: "下一步：TODO(实现 MCP pending request map)", "half-done": "下一步：TODO(handshake)" },
    pass: "· 通过",
    done33: "✔ 9. TODO(framing)",
    next13: "下一步：TODO(no-shell)",
    noTty: "监视模式需要在终端里运行",
    allDone: "全部 TODO 都已完成。",
  },
  en: {
    notYet: "Not passing yet is expected",
    next33: { starter: "next: TODO(pending-map)", "half-done": "next: TODO(handshake)" },
    pass: "· PASS",
    done33: "✔ 9. TODO(framing)",
    next13: "next: TODO(no-shell)",
    noTty: "Watch mode needs a terminal",
    allDone: "Every TODO is done.",
  },
} as const;

// The exit status and output one command must have at one stage.
export function expectation(command: string, stage: Stage): Expectation {
  const en = /--lang en|LAB_LANG=en/.test(command);
  const t = TEXT[en ? "en" : "zh"];
  const lab13 = /--lab 13|verify:lesson -- 13/.test(command);
  const absent = en ? ["TODO(实现"] : [];
  const started = stage !== "starter";
  if (/^node --version/.test(command)) return { exit: 0, contains: ["v"], absent: [] };
  if (/verify:lesson/.test(command)) {
    return { exit: 0, contains: [started ? (lab13 ? t.allDone : t.done33) : t.notYet], absent };
  }
  if (/^npm test$/.test(command)) return { exit: started ? 0 : 1, contains: [started ? "6 passed" : "1 passed"], absent: [] };
  if (/lab:starter/.test(command)) {
    const one = / -- (\S+ )*timeout\b/.test(command);
    const contains = one ? [started ? "1 passed" : "1 failed"] : [started ? "6 passed" : "1 passed"];
    if (command.includes("--watch")) contains.push(t.noTty);
    return { exit: started ? 0 : 1, contains, absent };
  }
  if (/^npm run grade/.test(command)) {
    if (lab13) return { exit: started ? 0 : 1, contains: [started ? t.pass : t.next13], absent };
    if (stage === "finished") return { exit: 0, contains: [t.pass, t.done33], absent };
    return { exit: 1, contains: [t.next33[stage]], absent };
  }
  throw new Error(`the walk has no expectation for \`${command}\`: add one to tests/lesson/walk-plan.ts`);
}
