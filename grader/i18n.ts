// What the grader itself says to a learner, in Simplified Chinese (default) or English.
// Messages produced by the lab's tests (tests/messages.ts) reach the report unchanged.

import { fillTemplate, type Lang } from "./message-template.ts";

const catalog = {
  missingEntry: { zh: "提交中没有 {file}", en: "the submission has no {file}" },
  missingFolder: { zh: "提交目录不存在：{dir}", en: "the submission folder does not exist: {dir}" },
  onlyRefused: {
    zh: "{where} 使用了 .only（评分时不允许只运行部分测试）",
    en: "{where} uses .only (grading never runs a subset of the tests)",
  },
  typeError: { zh: "类型检查失败：{where} {text}", en: "type check failed: {where} {text}" },
  typeErrorMore: { zh: "（另有 {count} 个错误）", en: "({count} more errors)" },
  importThrew: { zh: "导入 {file} 时抛出异常：{where}{text}", en: "importing {file} threw: {where}{text}" },
  importHung: {
    zh: "导入 {file} 在 {ms} ms 内没有完成（模块顶层有死循环或永不结束的等待？）{where}",
    en: "importing {file} did not finish within {ms} ms (an endless loop or a wait that never ends at module top level?){where}",
  },
  importWhere: { zh: "，卡在 {where}", en: "; it was stuck at {where}" },
  missingExport: { zh: "{file} 没有导出 {name}", en: "{file} does not export {name}" },
  notAClass: { zh: "{file} 导出的 {name} 不是类", en: "{file} exports {name}, but it is not a class" },
  notAFunction: { zh: "{file} 导出的 {name} 不是函数", en: "{file} exports {name}, but it is not a function" },
  noTests: { zh: "没有运行任何测试（0 个），无法评分", en: "no test ran (0 tests); nothing to grade" },
  runDeadline: {
    zh: "评分超过总时限 {ms} ms 被终止{running}",
    en: "grading was stopped at the overall deadline of {ms} ms{running}",
  },
  runDeadlineRunning: { zh: "；当时仍在运行：{tests}", en: "; still running then: {tests}" },
  runCrashed: {
    zh: "测试进程异常结束（退出码 {code}，信号 {signal}），没有写出完整结果{detail}",
    en: "the test process ended abnormally (exit code {code}, signal {signal}) without writing complete results{detail}",
  },
  resultsMissing: { zh: "测试结果文件缺失或不完整（提交调用了 process.exit？）", en: "the results file is missing or incomplete (did the submission call process.exit?)" },
  noTestsForCheck: { zh: "这一项的测试没有运行：{why}", en: "the tests of this check did not run: {why}" },
  fileFailed: { zh: "测试文件 {file} 无法运行：{text}", en: "test file {file} could not run: {text}" },
  testTimedOut: {
    zh: "挂起：测试「{title}」超过 {ms} ms 仍未结束",
    en: "hung: the test \"{title}\" had not finished after {ms} ms",
  },
  unhandledError: {
    zh: "有错误逃逸成未处理异常（真实进程里会让程序崩溃）：{error}",
    en: "an error escaped as an unhandled exception (it would crash a real process): {error}",
  },
  unhandledAfterTest: { zh: "（测试之外）", en: "(outside any test)" },
  failedTests: { zh: "{failed}/{total} 个测试失败", en: "{failed} of {total} tests failed" },
  testUnfinished: {
    zh: "这个测试没有结束（评分在它运行时被终止），不能算通过",
    en: "this test never finished (grading was stopped while it ran); it cannot count as passed",
  },
  unfinishedTests: {
    zh: "{count}/{total} 个测试没有结束：{titles}",
    en: "{count} of {total} tests never finished: {titles}",
  },
  passedAlongside: { zh: "已通过：{titles}", en: "passed: {titles}" },
  allPassed: { zh: "{total} 个测试全部通过", en: "all {total} tests passed" },
  orphanAfterClose: {
    zh: "「{test}」：测试收尾时（close() 或运行结束之后）进程 {pids} 仍然存活（已由评分器 SIGKILL）",
    en: "\"{test}\": process(es) {pids} still alive when the test wrapped up (after close() or the end of the run; SIGKILLed by the grader)",
  },
  strayProcess: {
    zh: "「{test}」：提交自己启动的进程 {pid}（{command}）在测试结束后仍然存活（已 SIGKILL）",
    en: "\"{test}\": process {pid} ({command}) started by the submission itself was alive after the test (SIGKILLed)",
  },
  survivorAfterRun: {
    zh: "评分结束时进程 {pid}（{command}）仍然存活（已 SIGKILL）{test}",
    en: "process {pid} ({command}) was still alive when grading ended (SIGKILLed){test}",
  },
  survivorTest: { zh: "，由「{test}」启动", en: ", started by \"{test}\"" },
  noOrphans: { zh: "{count} 个服务器进程，全部在 close() 后消失", en: "{count} server process(es), all gone after close()" },
  notRun: { zh: "未运行（评分提前结束）", en: "not run (grading stopped early)" },
  unknownTest: { zh: "未知测试", en: "unknown test" },
  importsOutside: {
    zh: "导入了提交目录之外的模块（只允许提交自己的文件和 node: 内置模块）：{where}",
    en: "imports outside the submission (only the submission's own files and node: built-ins are allowed): {where}",
  },
  sandboxFailed: { zh: "评分沙箱无法建立：{why}", en: "the grading sandbox could not be set up: {why}" },
  sandboxRequired: {
    zh: "要求使用沙箱（--sandbox required），但本机不支持：{why}",
    en: "a sandbox is required (--sandbox required) but this machine cannot provide one: {why}",
  },
  sandboxUnavailable: {
    zh: "注意：本机无法建立评分沙箱（{why}），提交将不经隔离运行",
    en: "note: no grading sandbox on this machine ({why}); submissions run without isolation",
  },
  channelTampered: {
    zh: "测试结果通道被篡改（{why}），结果不可信",
    en: "the result channel was tampered with ({why}); the results cannot be trusted",
  },
  memoryExhausted: {
    zh: "内存耗尽：运行「{test}」时测试进程超出了内存上限",
    en: "memory exhausted: the test process ran out of memory while running \"{test}\"",
  },
  workerCrashed: {
    zh: "测试进程在运行「{test}」时崩溃",
    en: "the test process crashed while running \"{test}\"",
  },
  importCheckTag: { zh: "导入检查时启动", en: "started during the import check" },
} as const;

export type GraderMessage = keyof typeof catalog;

// Fills a grader message with its parameters in the chosen language.
export function t(key: GraderMessage, lang: Lang, params: Record<string, unknown> = {}): string {
  return fillTemplate(catalog[key][lang], params);
}
