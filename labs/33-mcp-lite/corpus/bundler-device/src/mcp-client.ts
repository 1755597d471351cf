// Names a device where the grader's bundler (outside the sandbox) would read it, twice: as
// tsconfig.json "extends" and as the package.json "main" of k/, imported as text. A read of
// /dev/ptmx never returns: before the bundler resolved and read the submission's modules
// itself, the grade never ended, left its scratch folder behind and, in a batch, wrote no
// gradebook. Now the import of the folder k/ fails at run time.
// @ts-ignore
import device from "../k" with { type: "text" };

export class McpClient {
  readonly pendingCount = 0;
  constructor(readonly options: unknown) {
    void device;
  }
}
