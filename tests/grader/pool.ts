// A small semaphore: grading runs are heavy (a vitest child each), so the grader's own
// tests run at most a few at once however many vitest starts concurrently.

export function limiter(size: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (active >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      return await task();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}

/** Concurrent grades in the grader's own tests (2 cores: more only adds contention). */
export const GRADE_POOL_SIZE = Number(process.env.GRADER_TEST_POOL ?? 3);
/** Per-test limit for a test that grades, in ms (a safety net; grades finish far sooner). */
export const GRADE_TEST_TIMEOUT_MS = 360_000;
