// Lesson 13 manifest: the process boundary, the prerequisite of lesson 33. Everything the
// grader knows about this lab; the lesson anchors the hints point to are listed once below.

import { checkOf, defineLab, leftoversCheck, type CheckDef, type LabManifest, type TodoDef } from "../../grader/manifest.ts";

const LESSON = "lessons/13-process-boundary/README.md";

/** Lesson anchors the hints point to. */
export const LESSON_SECTIONS = {
  run: `${LESSON}#lab`,
  noShell: `${LESSON}#no-shell`,
  outputCap: `${LESSON}#output-cap`,
  timeout: `${LESSON}#timeout`,
  abort: `${LESSON}#abort`,
  reap: `${LESSON}#reap`,
} as const;

const checks: CheckDef[] = [
  checkOf("evidence/happy-path", "evidence", 10, LESSON_SECTIONS.run, {
    title: { zh: "基本流程：运行到结束，拿回退出码与输出", en: "Happy path: run to the end, get the exit code and output" },
    standard: { zh: "退出码、stdout、stderr 正确，非零退出码是结果而不是错误", en: "exit code, stdout and stderr right; a non-zero exit is a result, not an error" },
    deduction: { zh: "把非零退出码当异常，或丢了 stderr", en: "treating a non-zero exit as an exception, or losing stderr" },
    hint: { zh: "重读第 13 课「实验」一节：等程序退出后 resolve { exitCode, signal, stdout, stderr }。", en: "Reread lesson 13's lab section: resolve { exitCode, signal, stdout, stderr } once the program exited." },
  }),
  checkOf("evidence/no-shell", "evidence", 15, LESSON_SECTIONS.noShell, {
    title: { zh: "不经 shell，参数原样传递", en: "No shell; arguments verbatim" },
    standard: { zh: "spawn(executable, args, { shell: false })；整条命令行当 executable 会 SPAWN_FAILED", en: "spawn(executable, args, { shell: false }); a command line as executable is SPAWN_FAILED" },
    deduction: { zh: "拼接命令字符串交给 shell", en: "joining a command string for a shell" },
    hint: { zh: "重读第 13 课「不经 shell」一节：参数数组原样交给 spawn，shell: false；不要 join(\" \")。", en: "Reread lesson 13's no-shell section: hand the argument array to spawn as is, shell: false; never join(\" \")." },
  }),
  checkOf("evidence/output-cap", "evidence", 15, LESSON_SECTIONS.outputCap, {
    title: { zh: "输出字节上限", en: "Output byte cap" },
    standard: { zh: "超过 maxOutputBytes 立即停止程序，OUTPUT_LIMIT，只保留上限以内的字节", en: "past maxOutputBytes the program is stopped: OUTPUT_LIMIT, only the cap kept" },
    deduction: { zh: "无上限地拼接输出", en: "concatenating output without a limit" },
    hint: { zh: "重读第 13 课「输出上限」一节：按 Buffer 字节计数，超限就停止程序并以 OUTPUT_LIMIT 拒绝。", en: "Reread lesson 13's output-cap section: count Buffer bytes; past the cap, stop the program and reject OUTPUT_LIMIT." },
  }),
  checkOf("evidence/timeout", "evidence", 15, LESSON_SECTIONS.timeout, {
    title: { zh: "超时：SIGTERM → SIGKILL", en: "Timeout: SIGTERM → SIGKILL" },
    standard: { zh: "到期停止程序，忽略 SIGTERM 的在 killGraceMs 后 SIGKILL，退出后才 TIMEOUT，计时器清掉", en: "stopped at the deadline, SIGKILL after killGraceMs if SIGTERM is ignored, TIMEOUT after the exit, timers cleared" },
    deduction: { zh: "Promise.race 超时却不停止程序", en: "a Promise.race timeout that never stops the program" },
    hint: { zh: "重读第 13 课「超时」一节：计时器到期先 SIGTERM，killGraceMs 后 SIGKILL，等 exit 再 reject TIMEOUT，所有结局都 clearTimeout。", en: "Reread lesson 13's timeout section: at the deadline SIGTERM, SIGKILL after killGraceMs, reject TIMEOUT after the exit; clear the timers on every outcome." },
  }),
  checkOf("evidence/abort", "evidence", 15, LESSON_SECTIONS.abort, {
    title: { zh: "AbortSignal 取消", en: "AbortSignal cancellation" },
    standard: { zh: "已 abort 则什么都不启动；运行中 abort 停止程序；监听器总被移除", en: "an aborted signal starts nothing; an abort stops the program; the listener is always removed" },
    deduction: { zh: "忽略 signal，或监听器从不移除", en: "ignoring the signal, or never removing the listener" },
    hint: { zh: "重读第 13 课「取消」一节：spawn 之前检查 signal.aborted；abort 走与超时相同的停止阶梯；正常结束也 removeEventListener。", en: "Reread lesson 13's abort section: check signal.aborted before spawning; an abort runs the timeout's stop ladder; remove the listener on a normal end too." },
  }),
  checkOf("evidence/reaped", "evidence", 15, LESSON_SECTIONS.reap, {
    title: { zh: "回收：整个进程组都不在了才结束", en: "Reaped: settle only when the whole group is gone" },
    standard: { zh: "settle 时程序和它启动的进程都已退出，孙进程占着管道也不会卡住", en: "when it settles the program and what it started are gone; a grandchild holding the pipe does not stall it" },
    deduction: { zh: "等 close 不等 exit，或只杀父进程", en: "waiting for close instead of exit, or killing the parent only" },
    hint: { zh: "重读第 13 课「回收」一节：detached 建进程组，信号发给 -pid；等 exit，再结束组里剩下的进程并等到组消失，管道排空有上限。", en: "Reread lesson 13's reap section: detached makes a group, signal -pid; wait for exit, then stop what is left of the group and wait until it is gone, with a bounded drain." },
  }),
  leftoversCheck("probe/orphans", "probe", 15, LESSON_SECTIONS.reap, {
    title: { zh: "孤儿进程探针", en: "Orphan probe" },
    standard: { zh: "每个测试结束时，它运行过的程序都已不在", en: "at the end of every test, no program it ran is alive" },
    deduction: { zh: "留下仍在运行的程序", en: "leaving programs running" },
    hint: { zh: "重读第 13 课「回收」一节：每一种结局（正常、超时、取消、超限）都要等程序真正退出。", en: "Reread lesson 13's reap section: every ending (normal, timeout, abort, cap) waits until the program really exited." },
  }),
];

const todos: TodoDef[] = [
  { tag: "no-shell", title: { zh: "不经 shell，参数原样", en: "no shell, arguments verbatim" }, section: "4.1", lesson: LESSON_SECTIONS.noShell, checks: ["evidence/no-shell"] },
  { tag: "output-cap", title: { zh: "输出字节上限", en: "output byte cap" }, section: "4.2", lesson: LESSON_SECTIONS.outputCap, checks: ["evidence/output-cap"] },
  { tag: "timeout", title: { zh: "超时与 SIGKILL 兜底", en: "timeout with a SIGKILL fallback" }, section: "4.3", lesson: LESSON_SECTIONS.timeout, checks: ["evidence/timeout"] },
  { tag: "abort", title: { zh: "AbortSignal", en: "AbortSignal" }, section: "4.4", lesson: LESSON_SECTIONS.abort, checks: ["evidence/abort"] },
  { tag: "reap", title: { zh: "进程组与回收", en: "process group and reaping" }, section: "4.5", lesson: LESSON_SECTIONS.reap, checks: ["evidence/reaped", "probe/orphans"] },
];

export const lab: LabManifest = defineLab({
  id: "13-process-boundary",
  title: { zh: "第 13 课：进程边界", en: "Lab 13: the process boundary" },
  entry: "src/run-process.ts",
  requiredExports: ["runProcess", "ProcessError"],
  exportKinds: { runProcess: "function", ProcessError: "class" },
  probeFiles: [],
  homeworkWeight: 0,
  checks,
  todos,
  starterPasses: ["evidence/happy-path"],
});

export default lab;
