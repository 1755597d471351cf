// `npm run lab:starter -- --watch`: the learner's loop, rerun on every save. Each round is the
// whole safe run of scripts/lab-test.ts (type check, import check, the evidence tests under the
// wall-clock limit), so a type error is reported on every rerun exactly as on the first run,
// and a round that stops on one waits for the next save instead of ending the loop.
// Watch mode reads keys from the terminal; without one (CI, a pipe) it says so and the caller
// runs once instead.

import { watch, type FSWatcher } from "node:fs";
import { fillTemplate } from "../grader/message-template.ts";

type Lang = "zh" | "en";

const WORDS = {
  zh: {
    start: "监视模式：保存 {dir} 里的文件后重新做类型检查并重跑测试；按 q 或 Ctrl-C 退出。",
    wait: "—— 等待文件变化（按 q 退出）……",
    changed: "—— 检测到变化：{file}",
    noTty: "监视模式需要在终端里运行（这里没有终端，无法读取按键）：只运行一次。",
  },
  en: {
    start: "Watch mode: saving a file in {dir} type-checks again and reruns the tests; press q or Ctrl-C to quit.",
    wait: "—— waiting for a change (press q to quit) …",
    changed: "—— changed: {file}",
    noTty: "Watch mode needs a terminal (there is none here to read keys from): running once instead.",
  },
} as const;

/** Quiet time after the last change before a round starts, in ms (editors write in bursts). */
const SETTLE_MS = 200;

export function watchWords(lang: Lang, key: keyof (typeof WORDS)["zh"], params: Record<string, unknown> = {}): string {
  return fillTemplate(WORDS[lang][key], params);
}

/** Whether watch mode can run here: it needs a terminal to read the quit key from. */
export function canWatch(stdin: NodeJS.ReadStream = process.stdin): boolean {
  return stdin.isTTY === true && typeof stdin.setRawMode === "function";
}

// Runs `round` now and again after every change under `dir`, until q, Ctrl-C or SIGTERM.
// A change during a round starts another round right after it. Resolves 0 when the learner quits.
export function watchLoop(dir: string, lang: Lang, round: () => Promise<unknown>): Promise<number> {
  return new Promise((done) => {
    let running = false;
    let dirty = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let watcher: FSWatcher | undefined;
    const stdin = process.stdin;
    const next = async () => {
      if (running) return void (dirty = true);
      running = true;
      do {
        dirty = false;
        await round().catch((error: unknown) => console.error(error));
      } while (dirty);
      running = false;
      console.log(`\n${watchWords(lang, "wait")}`);
    };
    const quit = () => {
      clearTimeout(timer);
      watcher?.close();
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onKey);
      process.off("SIGTERM", quit);
      done(0);
    };
    const onKey = (key: Buffer) => {
      const k = key.toString();
      if (k === "q" || k === "Q" || k === "\u0003") quit();
    };
    console.log(watchWords(lang, "start", { dir }));
    watcher = watch(dir, { recursive: true }, (_event, file) => {
      if (file && /(^|[/\\])(node_modules|\.)/.test(String(file))) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        console.log(`\n${watchWords(lang, "changed", { file: file ?? dir })}`);
        void next();
      }, SETTLE_MS);
    });
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onKey);
    process.once("SIGTERM", quit);
    void next();
  });
}
