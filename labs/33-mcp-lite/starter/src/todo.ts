// Marks the parts of the starter the learner still has to build. Calling one of them
// fails loudly at run time (never at import), naming the task.
export function todo(task: string): never {
  throw new Error(`TODO(${task})`);
}
