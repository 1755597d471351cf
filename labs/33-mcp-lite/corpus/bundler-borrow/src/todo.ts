// 给定文件（GIVEN）：不需要修改，也没有 TODO。直接 import 使用即可。
// Given file: nothing to do here.
// Marks the parts of the starter the learner still has to build. Calling one of them
// fails loudly at run time (never at import), naming the task.
export function todo(task: string): never {
  throw new Error(`TODO(${task})`);
}
