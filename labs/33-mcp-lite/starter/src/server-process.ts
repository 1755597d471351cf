// TODO(process): spawn(executable, args, { shell: false }) 放进独立的模块：环境变量白名单、
// 有界 stderr、背压发送队列，以及 end stdin → SIGTERM → SIGKILL 的关闭阶梯（等待 exit 才算结束）。
import { todo } from "./todo.ts";
import type { StderrTail } from "./stderr-tail.ts";

export const EXIT_DRAIN_MS = 200;
export const GROUP_REAP_MS = 1_000;

export function buildServerEnv(_extra: Record<string, string>): Record<string, string> {
  return todo("process: 只放行 PATH 等白名单变量，再叠加 options.env");
}

export interface ExitInfo {
  exitCode: number | null;
  signal: string | null;
}

export interface ServerProcessOptions {
  executable: string;
  args: string[];
  cwd: string | undefined;
  env: Record<string, string>;
  maxStderrBytes: number;
  onStdout: (chunk: Buffer) => void;
  onWriteError: (error: Error) => void;
  onExit: (info: ExitInfo) => void;
}

export class ServerProcess {
  constructor(_options: ServerProcessOptions) {}
  get stderr(): StderrTail {
    return todo("process: stderr 尾部");
  }
  get pid(): number | undefined {
    return todo("process: pid");
  }
  get hasExited(): boolean {
    return todo("process: hasExited");
  }
  get queuedLines(): number {
    return todo("process: 背压队列长度");
  }
  start(): Promise<void> {
    return todo("process: spawn 并区分 ENOENT / EACCES");
  }
  send(_line: string, _beforeWrite?: () => boolean, _wanted?: () => boolean): "written" | "queued" | "dropped" {
    return todo("process: write 返回 false 时排队等待 drain");
  }
  discardUnwanted(): number {
    return todo("process: 已 settle 的排队请求立即出队");
  }
  sendIfIdle(_line: string): boolean {
    return todo("process: 尽力发送的通知");
  }
  stop(_graceMs: number): Promise<void> {
    return todo("process: end stdin → SIGTERM → SIGKILL，等待 exit");
  }
  stopReading(): void {
    todo("process: 协议故障后不再读取 stdout");
  }
  killNow(): void {
    todo("process: 同步 SIGKILL");
  }
}

export function listGroupMembers(_pgid: number): Array<{ pid: number; state: string }> {
  return todo("process: 列出进程组成员");
}
