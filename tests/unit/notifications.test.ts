import { describe, expect, it } from "vitest";
import { isNegotiated, UnsolicitedBudget } from "#submission/src/notifications.ts";

describe("UnsolicitedBudget", () => {
  it("admits up to the count per one-second window and names the cap it broke", () => {
    const budget = new UnsolicitedBudget(3, 1_000);
    expect([1, 2, 3].map(() => budget.admit(10, 5_000))).toEqual([undefined, undefined, undefined]);
    expect(budget.admit(10, 5_500)).toMatch(/more than 3 per second/);
    // A new window starts a second after the previous one.
    expect(budget.admit(10, 6_000)).toBeUndefined();
  });

  it("caps the bytes per window as well", () => {
    const budget = new UnsolicitedBudget(100, 50);
    expect(budget.admit(40, 0)).toBeUndefined();
    expect(budget.admit(20, 10)).toMatch(/more than 50 bytes per second/);
  });

  it("admits exactly the byte cap and the count cap, not one more", () => {
    const bytes = new UnsolicitedBudget(100, 50);
    expect(bytes.admit(50, 0)).toBeUndefined();
    expect(bytes.admit(1, 1)).toMatch(/bytes per second/);
    const count = new UnsolicitedBudget(1, 50);
    expect(count.admit(1, 0)).toBeUndefined();
    expect(count.admit(1, 999)).toMatch(/more than 1 per second/);
    expect(count.admit(1, 1_999)).toBeUndefined();
  });
});

describe("isNegotiated", () => {
  const pending = (id: number) => id === 7;

  it("passes progress only for a request still in flight", () => {
    expect(isNegotiated("notifications/progress", { progressToken: 7 }, {}, pending)).toBe(true);
    expect(isNegotiated("notifications/progress", { progressToken: 8 }, {}, pending)).toBe(false);
    expect(isNegotiated("notifications/progress", { progressToken: "7" }, {}, pending)).toBe(false);
    expect(isNegotiated("notifications/progress", undefined, {}, pending)).toBe(false);
  });

  it("passes log messages and list changes only when the server declared them", () => {
    expect(isNegotiated("notifications/message", {}, { logging: {} }, pending)).toBe(true);
    expect(isNegotiated("notifications/message", {}, {}, pending)).toBe(false);
    expect(isNegotiated("notifications/message", {}, undefined, pending)).toBe(false); // before the handshake finished
    expect(isNegotiated("notifications/tools/list_changed", {}, { tools: { listChanged: true } }, pending)).toBe(true);
    expect(isNegotiated("notifications/tools/list_changed", {}, { tools: {} }, pending)).toBe(false);
    expect(isNegotiated("notifications/tools/list_changed", {}, undefined, pending)).toBe(false);
  });

  it("ignores anything else", () => {
    expect(isNegotiated("notifications/resources/updated", {}, { resources: { subscribe: true } }, pending)).toBe(false);
  });
});
