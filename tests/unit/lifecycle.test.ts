import { describe, expect, it } from "vitest";
import { Lifecycle } from "#submission/src/lifecycle.ts";

// Walks a fresh lifecycle through the named transitions and returns it.
function after(...steps: Array<"toStarting" | "toReady" | "toIdle" | "toClosing" | "toClosed">): Lifecycle {
  const lifecycle = new Lifecycle();
  for (const step of steps) lifecycle[step]();
  return lifecycle;
}

describe("Lifecycle", () => {
  it("starts idle: not ready, not starting, not shutting down", () => {
    const lifecycle = new Lifecycle();
    expect(lifecycle.state).toBe("idle");
    expect([lifecycle.isReady(), lifecycle.isStarting(), lifecycle.isShuttingDown()]).toEqual([false, false, false]);
  });

  it("goes idle → starting → ready, and says so at each step", () => {
    const starting = after("toStarting");
    expect(starting.state).toBe("starting");
    expect([starting.isStarting(), starting.isReady()]).toEqual([true, false]);
    const ready = after("toStarting", "toReady");
    expect(ready.state).toBe("ready");
    expect([ready.isStarting(), ready.isReady(), ready.isShuttingDown()]).toEqual([false, true, false]);
  });

  it("becomes ready only from starting", () => {
    expect(after("toReady").state).toBe("idle");
    expect(after("toClosing", "toReady").state).toBe("closing");
  });

  it("goes back to idle from starting or ready after a failure", () => {
    expect(after("toStarting", "toIdle").state).toBe("idle");
    expect(after("toStarting", "toReady", "toIdle").state).toBe("idle");
  });

  it("never leaves closing or closed for idle, starting or ready", () => {
    for (const shutDown of [after("toClosing"), after("toClosing", "toClosed")]) {
      const before = shutDown.state;
      shutDown.toIdle();
      shutDown.toStarting();
      shutDown.toReady();
      expect(shutDown.state).toBe(before);
      expect(shutDown.isShuttingDown()).toBe(true);
      expect(shutDown.isReady()).toBe(false);
    }
  });

  it("closes from any state, and a closed lifecycle stays closed", () => {
    expect(after("toStarting", "toReady", "toClosing").state).toBe("closing");
    expect(after("toStarting", "toClosing").state).toBe("closing");
    expect(after("toClosing", "toClosed").state).toBe("closed");
    expect(after("toClosing", "toClosed", "toClosing").state).toBe("closed");
  });
});
