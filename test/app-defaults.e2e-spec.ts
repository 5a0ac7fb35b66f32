/**
 * Two copies of the application on their development defaults (embedded SQLite, embedded
 * worker ID 0) on one host: the second cannot issue snowflake IDs next to the first. Its
 * state lock refuses it at start (LEAF_WORKER_STATE_LOCKED), so the 11,552 identical IDs
 * two such copies once issued cannot happen.
 */
import { join } from 'node:path';
import { LeafErrorCode } from 'nestjs-leaf';
import { tempDir } from './support/app';
import { AppProcess, killAllAppProcesses } from './support/app-process';
import { HttpClient } from './support/http-client';

describe('two default-configured instances on one host', () => {
  const dir = tempDir('leaf-defaults');
  afterAll(async () => {
    await killAllAppProcesses();
    dir.remove();
  });

  it('the second refuses to start with LEAF_WORKER_STATE_LOCKED; the first keeps issuing', async () => {
    // The defaults, moved into a temp directory: ./data/leaf.sqlite and ./data for state.
    const env = {
      PORT: '0',
      HOST: '127.0.0.1',
      LEAF_DB_URL: `sqlite:${join(dir.path, 'leaf.sqlite')}`,
      LEAF_STATE_DIR: dir.path,
    };
    const first = AppProcess.spawn(env, { timeoutMs: 60_000 });
    const port = await first.listening();
    const second = await AppProcess.run(env, { timeoutMs: 30_000 });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`Leaf failed to start: [${LeafErrorCode.WORKER_STATE_LOCKED}]`);
    expect(second.stdout).not.toContain('Leaf listening on');

    const client = new HttpClient(`http://127.0.0.1:${port}`);
    try {
      const answer = await client.send('/api/snowflake/get/k');
      expect(answer.status).toBe(200);
      expect(answer.body).toMatch(/^\d+$/);
    } finally {
      client.close();
    }
    await first.stop();
  }, 90_000);
});
