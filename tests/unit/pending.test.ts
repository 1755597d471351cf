import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PendingTable, type ExpireReason, type PendingRecord } from "#submission/src/pending.ts";

const expireError = (record: PendingRecord, reason: ExpireReason) =>
  Object.assign(new Error(`${record.method} ${reason}`), { code: reason === "timeout" ? "MCP_TIMEOUT" : "MCP_ABORTED" });

afterEach(() => {
  vi.useRealTimers();
});

describe("PendingTable", () => {
  it("resolves a request once and forgets it", async () => {
    const table = new PendingTable();
    const promise = table.open(1, "tools/call", { timeoutMs: 1_000, expireError });
    expect(table.size).toBe(1);
    expect(table.settle(1, { ok: true, value: "first" })).toBe(true);
    expect(table.settle(1, { ok: true, value: "second" })).toBe(false);
    await expect(promise).resolves.toBe("first");
    expect(table.size).toBe(0);
  });

  it("settles exactly once when answer, timeout and abort race", async () => {
    vi.useFakeTimers();
    const table = new PendingTable();
    const controller = new AbortController();
    const onExpire = vi.fn();
    const promise = table.open(7, "tools/call", { timeoutMs: 10, signal: controller.signal, expireError, onExpire });
    // All three paths fire in the same turn; the first to delete the entry wins.
    controller.abort();
    vi.advanceTimersByTime(10);
    expect(table.settle(7, { ok: true, value: "late" })).toBe(false);
    await expect(promise).rejects.toMatchObject({ code: "MCP_ABORTED" });
    expect(onExpire).toHaveBeenCalledTimes(1);
    expect(onExpire).toHaveBeenCalledWith(expect.objectContaining({ id: 7 }), "abort");
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("times out with its own timer and removes its abort listener", async () => {
    vi.useFakeTimers();
    const table = new PendingTable();
    const controller = new AbortController();
    const promise = table.open(2, "tools/call", { timeoutMs: 50, signal: controller.signal, expireError });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    vi.advanceTimersByTime(50);
    await expect(promise).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    expect(table.size).toBe(0);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("clears the timer and the listener when the answer comes first", async () => {
    vi.useFakeTimers();
    const table = new PendingTable();
    const controller = new AbortController();
    const promise = table.open(3, "tools/call", { timeoutMs: 50, signal: controller.signal, expireError });
    table.settle(3, { ok: true, value: 42 });
    await expect(promise).resolves.toBe(42);
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("rejects everything pending with one error each, from a snapshot", async () => {
    const table = new PendingTable();
    const promises = [1, 2, 3].map((id) => table.open(id, "tools/call", { timeoutMs: 1_000, expireError }));
    let opened: Promise<unknown> | undefined;
    promises[0]!.catch(() => {
      // A handler that opens a new request does not extend the loop.
      opened = table.open(99, "ping", { timeoutMs: 1_000, expireError });
    });
    const count = table.rejectAll((record) => new Error(`gone ${record.id}`));
    expect(count).toBe(3);
    const outcomes = await Promise.allSettled(promises);
    expect(outcomes.map((o) => (o as PromiseRejectedResult).reason.message)).toEqual(["gone 1", "gone 2", "gone 3"]);
    expect(table.has(99)).toBe(true);
    table.settle(99, { ok: true, value: null });
    await opened;
    expect(table.size).toBe(0);
  });

  it("adds one abort listener per signal, however many requests share it", async () => {
    const table = new PendingTable();
    const controller = new AbortController();
    const promises = Array.from({ length: 100 }, (_, i) =>
      table.open(i + 1, "tools/call", { timeoutMs: 1_000, signal: controller.signal, expireError }),
    );
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    table.settle(1, { ok: true, value: "done" });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    controller.abort();
    const outcomes = await Promise.allSettled(promises);
    expect(outcomes.filter((o) => o.status === "rejected")).toHaveLength(99);
    expect(table.size).toBe(0);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("removes the shared listener when the signal's last request settles normally", async () => {
    const table = new PendingTable();
    const controller = new AbortController();
    const promises = [1, 2, 3].map((id) => table.open(id, "ping", { timeoutMs: 1_000, signal: controller.signal, expireError }));
    for (const id of [1, 2, 3]) table.settle(id, { ok: true, value: id });
    await Promise.all(promises);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("rejects at once a request opened with a signal that is already aborted", async () => {
    const table = new PendingTable();
    const controller = new AbortController();
    controller.abort();
    await expect(table.open(9, "ping", { timeoutMs: 1_000, signal: controller.signal, expireError })).rejects.toMatchObject({
      code: "MCP_ABORTED",
    });
    expect(table.size).toBe(0);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("refuses to open an id that is already pending", () => {
    const table = new PendingTable();
    void table.open(5, "ping", { timeoutMs: 1_000, expireError }).catch(() => {});
    expect(() => table.open(5, "ping", { timeoutMs: 1_000, expireError })).toThrow(/already pending/);
    table.rejectAll(() => new Error("cleanup"));
  });

  it("leaves nothing behind after 100 requests settled in random ways", async () => {
    vi.useFakeTimers();
    const table = new PendingTable();
    const controllers: AbortController[] = [];
    const promises: Promise<unknown>[] = [];
    for (let id = 1; id <= 100; id += 1) {
      const controller = new AbortController();
      controllers.push(controller);
      promises.push(table.open(id, "tools/call", { timeoutMs: 10 + (id % 7), signal: controller.signal, expireError }));
    }
    for (let id = 1; id <= 100; id += 1) {
      if (id % 3 === 0) table.settle(id, { ok: true, value: id });
      else if (id % 3 === 1) controllers[id - 1]!.abort();
    }
    vi.advanceTimersByTime(100);
    const outcomes = await Promise.allSettled(promises);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(33);
    expect(table.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(controllers.every((c) => getEventListeners(c.signal, "abort").length === 0)).toBe(true);
  });
});
