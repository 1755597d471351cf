// What a failing lesson 13 evidence test tells the learner, in Simplified Chinese (default)
// or English (LAB_LANG=en). The grader shows these messages as they are.

import { filler } from "../../../grader/message-template.ts";

export { LANG, say, type Lang } from "../../../grader/message-template.ts";

const catalog = {
  hung: { zh: "挂起：{label} 在 {ms} ms 内既没有 resolve 也没有 reject", en: "hung: {label} never settled within {ms} ms" },
  shouldReject: { zh: "{label} 应该 reject，却 resolve 成了 {value}", en: "{label} should have rejected, but resolved with {value}" },
  wrongCode: { zh: "{label} 应以 code {expected} reject，实际是 {actual}", en: "{label} should reject with code {expected}, got {actual}" },
  wrongValue: { zh: "{label} 应为 {expected}，实际是 {actual}", en: "{label} should be {expected}, got {actual}" },
  argsChanged: {
    zh: "参数没有原样到达程序（经过了 shell？被拼接或拆分了？）：发送 {sent}，程序收到 {got}",
    en: "the arguments did not reach the program verbatim (a shell? joined or split?): sent {sent}, the program got {got}",
  },
  outputTooBig: {
    zh: "输出上限是 {max} 字节，error.run.stdout 却有 {actual} 字节",
    en: "the output cap is {max} bytes, but error.run.stdout holds {actual} bytes",
  },
  aliveAfterSettle: {
    zh: "{label} 已经结束，但进程 {pids} 仍然存活（没有等待退出，或没有结束整个进程组）",
    en: "{label} settled but process(es) {pids} are still alive (it did not wait for the exit, or did not stop the whole group)",
  },
  spawnedAfterAbort: {
    zh: "signal 已经 abort，程序却还是被启动了",
    en: "the signal was already aborted, yet the program was started",
  },
  listenersLeft: {
    zh: "{when}后 AbortSignal 上还挂着 {count} 个 abort 监听器（没有 removeEventListener）",
    en: "after {when}, {count} abort listener(s) are still attached to the AbortSignal (never removed)",
  },
  timersLeft: {
    zh: "{when}后 runProcess 还留着 {count} 个计时器：{where}",
    en: "after {when}, runProcess still holds {count} timer(s): {where}",
  },
} as const;

export type MessageKey = keyof typeof catalog;

/** Fills a catalogue message with its parameters in the chosen language (default LANG). */
export const msg = filler<MessageKey>(catalog);
