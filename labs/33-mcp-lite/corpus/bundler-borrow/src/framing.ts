// 待办 9（见 mcp-client.ts 顶部的索引；rubric/handshake 的 oversized 一项评的就是它）。
// TODO(framing): 按字节切分 stdout 的行，并在整行进入内存之前执行 maxLineBytes 上限。
// The starter reads lines with readline, which holds a line of any size in memory; a decoder
// that counts bytes can refuse an oversized line as soon as it is known to be too long.
import { todo } from "./todo.ts";

export class LineTooLongError extends Error {
  readonly limitBytes: number;
  readonly seenBytes: number;
  constructor(limitBytes: number, seenBytes: number) {
    super(`line exceeds maxLineBytes (${limitBytes} bytes): at least ${seenBytes} bytes without a newline`);
    this.name = "LineTooLongError";
    this.limitBytes = limitBytes;
    this.seenBytes = seenBytes;
  }
}

export class LineDecoder {
  readonly maxLineBytes: number;
  constructor(maxLineBytes: number) {
    this.maxLineBytes = maxLineBytes;
  }
  get bufferedBytes(): number {
    return todo("framing: 记录当前未完成行的字节数");
  }
  push(_chunk: Buffer): string[] {
    return todo("framing: 在 0x0A 处切行，超过 maxLineBytes 立即抛出 LineTooLongError");
  }
  fail(): void {
    todo("framing: 丢弃缓冲，之后的输入一律忽略");
  }
}

export function encodeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
