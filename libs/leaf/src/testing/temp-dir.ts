import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/**
 * A fresh directory under the OS temp directory (named `prefix` and a random suffix) for each
 * test of the enclosing `describe`, removed after the test: call it inside the `describe`. The
 * returned function reads the running test's directory.
 */
export function tempDirPerTest(prefix: string): () => string {
  let dir: string | undefined;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(tmpdir(), prefix));
  });
  afterEach(async () => {
    if (dir !== undefined) await fs.rm(dir, { recursive: true, force: true });
    dir = undefined;
  });
  return () => {
    if (dir === undefined) throw new Error('No test is running: the temp directory is not made');
    return dir;
  };
}
