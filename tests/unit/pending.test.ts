import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
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

  it("tells onExpire nothing when the request was settled while its rejection was being built", async () => {
    vi.useFakeTimers();
    const table = new PendingTable();
    const onExpire = vi.fn();
    // The rejection's builder answers the request first (re-entrant settle): the timeout
    // did not end it, so no cancellation notice may follow.
    const promise = table.open(4, "tools/call", {
      timeoutMs: 10,
      expireError: (record) => {
        table.settle(record.id, { ok: true, value: "answered meanwhile" });
        return new Error("too late");
      },
      onExpire,
    });
    vi.advanceTimersByTime(10);
    await expect(promise).resolves.toBe("answered meanwhile");
    expect(onExpire).not.toHaveBeenCalled();
  });

  it("calls onExpire once per expired request, with its reason", async () => {
    vi.useFakeTimers();
    const table = new PendingTable();
    const onExpire = vi.fn();
    const promise = table.open(6, "tools/call", { timeoutMs: 10, expireError, onExpire });
    vi.advanceTimersByTime(9);
    expect(onExpire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    await expect(promise).rejects.toMatchObject({ code: "MCP_TIMEOUT" });
    expect(onExpire).toHaveBeenCalledExactlyOnceWith(expect.objectContaining({ id: 6, method: "tools/call" }), "timeout");
  });

  it("survives an abort whose first expiry settles another request of the same signal", async () => {
    const table = new PendingTable();
    const controller = new AbortController();
    const errors: unknown[] = [];
    const onUncaught = (error: unknown) => errors.push(error);
    process.on("uncaughtException", onUncaught);
    onTestFinished(() => void process.off("uncaughtException", onUncaught));
    const first = table.open(1, "ping", {
      timeoutMs: 1_000,
      signal: controller.signal,
      expireError,
      onExpire: () => table.settle(2, { ok: true, value: "settled by the first" }),
    });
    const second = table.open(2, "ping", { timeoutMs: 1_000, signal: controller.signal, expireError });
    controller.abort();
    await expect(first).rejects.toMatchObject({ code: "MCP_ABORTED" });
    await expect(second).resolves.toBe("settled by the first");
    expect(errors).toEqual([]);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("hands the abort reason to the rejection's builder", async () => {
    const table = new PendingTable();
    const controller = new AbortController();
    const builder = vi.fn(expireError);
    const promise = table.open(8, "ping", { timeoutMs: 1_000, signal: controller.signal, expireError: builder });
    controller.abort("user pressed stop");
    await expect(promise).rejects.toMatchObject({ code: "MCP_ABORTED" });
    expect(builder).toHaveBeenCalledWith(expect.objectContaining({ id: 8 }), "abort", "user pressed stop");
  });

  it("knows its records by id while they are pending, and not after", async () => {
    const table = new PendingTable();
    const promise = table.open(11, "tools/list", { timeoutMs: 1_000, expireError });
    expect(table.has(11)).toBe(true);
    expect(table.get(11)).toMatchObject({ id: 11, method: "tools/list" });
    expect(table.has(12)).toBe(false);
    table.settle(11, { ok: false, error: new Error("no") });
    await expect(promise).rejects.toThrow("no");
    expect([table.has(11), table.get(11), table.settle(11, { ok: true, value: 1 })]).toEqual([false, undefined, false]);
  });
});
