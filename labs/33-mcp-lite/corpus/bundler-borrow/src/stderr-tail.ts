// 待办 10（作业 homework/bounded-stderr；见 mcp-client.ts 顶部的索引）。
// TODO(stderr): 只保留 stderr 最后 maxBytes 个字节，按 UTF-8 字符边界截断并标记 truncated。
import { todo } from "./todo.ts";

export class StderrTail {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }
  get truncated(): boolean {
    return todo("stderr: truncated");
  }
  get size(): number {
    return todo("stderr: size");
  }
  push(_chunk: Buffer): void {
    todo("stderr: 按字节保留尾部");
  }
  get text(): string {
    return todo("stderr: 解码完整字符");
  }
}

export function decodeWholeCharacters(_bytes: Buffer, _headWasCut: boolean): string {
  return todo("stderr: 去掉被截断的首尾字符再解码");
}
