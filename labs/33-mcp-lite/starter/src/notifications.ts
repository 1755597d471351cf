// TODO(notifications): 服务端主动发来的消息（notification 与 server request）每秒有条数和字节预算，
// 超出即视为洪水并按协议故障处理；只把握手中协商过的通知交给 onNotification。
import { todo } from "./todo.ts";

export class UnsolicitedBudget {
  constructor(_maxPerSecond: number, _maxBytesPerSecond: number) {}
  admit(_lineBytes: number, _now = Date.now()): string | undefined {
    return todo("notifications: 一秒一个窗口，计条数和字节，超出返回原因");
  }
}

export function isNegotiated(
  _method: string,
  _params: unknown,
  _capabilities: Record<string, unknown> | undefined,
  _isPending: (id: number) => boolean,
): boolean {
  return todo("notifications: progress 须对应在途请求；message 需要 logging；list_changed 需要 tools.listChanged");
}
