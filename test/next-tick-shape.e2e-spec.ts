/**
 * The application keeps `process.nextTick` on V8's fast path (src/next-tick-shape.ts;
 * docs/benchmarks.md, *Node's `nextTick` slow path*). Without it, a full garbage collection at a
 * moment no nextTick entry is alive lets V8 drop the entries' hidden classes; the next entry
 * gets new ones and V8 marks three of the five keys of nextTick's object literal
 * megamorphic for good, which costs about 2 µs of CPU per HTTP request.
 *
 * The application runs as a real process, as a deployer starts it (the build when it is fresh,
 * environment only), with a preload that can force full collections and read V8's feedback
 * (test/support/next-tick-feedback.js, under --allow-natives-syntax and --expose-gc). After
 * start-up, requests, full collections while the loop is idle, and requests again, every key
 * of the literal is still monomorphic. With the application's first import removed this test
 * fails: three or four of the keys read MEGAMORPHIC.
 */
import { join } from 'node:path';
import { tempDir } from './support/app';
import { AppProcess, freshestAppArgs, killAllAppProcesses } from './support/app-process';
import { HttpClient, runBounded } from './support/http-client';

const PRELOAD = join(__dirname, 'support', 'next-tick-feedback.js');

jest.setTimeout(60_000);

/** Sends SIGUSR2 and resolves with the feedback states the preload prints in answer. */
async function feedbackAfterFullGc(app: AppProcess): Promise<string[]> {
  const seen = app.stderr.length;
  app.signal('SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 20) {
    const match = /NEXT_TICK_FEEDBACK (\[.*\])\n/.exec(app.stderr.slice(seen));
    if (match) return JSON.parse(match[1]) as string[];
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no feedback line on stderr:\n${app.stderr}`);
}

describe('nextTick stays on the fast path in the application process', () => {
  const dir = tempDir('leaf-next-tick');
  afterAll(async () => {
    await killAllAppProcesses();
    dir.remove();
  });

  it('every key of nextTick’s entry literal is monomorphic after load and full collections', async () => {
    const app = AppProcess.spawn(
      {
        PORT: '0',
        HOST: '127.0.0.1',
        LEAF_DB_URL: `sqlite:${join(dir.path, 'leaf.sqlite')}`,
        LEAF_STATE_DIR: dir.path,
      },
      {
        timeoutMs: 60_000,
        args: ['--allow-natives-syntax', '--expose-gc', '-r', PRELOAD, ...freshestAppArgs()],
      },
    );
    const port = await app.listening();
    const client = new HttpClient(`http://127.0.0.1:${port}`);
    const load = (): Promise<void> =>
      runBounded(2_000, 16, async (i) => {
        const path = i % 2 === 0 ? '/api/segment/get/leaf-segment-test' : '/api/snowflake/get/k';
        const answer = await client.send(path);
        expect(answer.status).toBe(200);
      }).then(() => undefined);
    try {
      await load();
      await feedbackAfterFullGc(app);
      await load();
      const states = await feedbackAfterFullGc(app);
      // Node 24's literal: two computed symbol keys, the context frame, `callback`, `args`.
      expect(states).toHaveLength(5);
      expect(states).toEqual(Array(5).fill('MONOMORPHIC'));
    } finally {
      client.close();
      await app.stop();
    }
  });
});
