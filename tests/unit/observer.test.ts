import { describe, expect, it, vi } from "vitest";
import { observe, ObservedPendingTable, type ClientObserver } from "#submission/src/observer.ts";

const expireError = () => new Error("expired");

describe("observer", () => {
  it("calls the named hook with the event, bound to the observer", () => {
    const seen: unknown[] = [];
    const observer: ClientObserver & { name: string } = {
      name: "mine",
      spawned(event) {
        seen.push([this.name, event]);
      },
    };
    observe(observer, "spawned", { pid: 42 });
    expect(seen).toEqual([["mine", { pid: 42 }]]);
  });

  it("does nothing without an observer or without that hook, and swallows what a hook throws", () => {
    expect(() => observe(undefined, "spawned", { pid: 1 })).not.toThrow();
    expect(() => observe({}, "exited", { exitCode: 0, signal: null, expected: true })).not.toThrow();
    const throwing: ClientObserver = {
      spawned: () => {
        throw new Error("observer bug");
      },
    };
    expect(() => observe(throwing, "spawned", { pid: 1 })).not.toThrow();
  });

  it("tells the observer about every request the table opens, with a promise that settles with it", async () => {
    const request = vi.fn();
    const table = new ObservedPendingTable({ request });
    const promise = table.open(3, "tools/call", { timeoutMs: 1_000, expireError });
    expect(request).toHaveBeenCalledExactlyOnceWith({ id: 3, method: "tools/call", settled: promise });
    table.settle(3, { ok: true, value: "done" });
    await expect(promise).resolves.toBe("done");
  });
});
