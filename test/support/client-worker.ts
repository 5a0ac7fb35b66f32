/**
 * A client process for test/system/client-failover.e2e-spec.ts: takes segment IDs through
 * `nestjs-leaf/client` from the servers in LEAF_CLIENT_SERVERS (comma-separated) for
 * LEAF_CLIENT_RUN_MS, one caller per tag (LEAF_CLIENT_TAGS) taking batches of 10, and writes
 * every ID in the order it was handed out, the error codes seen and the client's counters as
 * JSON to the file in argv[2]. A caller that gets an error pauses 50 ms (as an application
 * would) and goes on.
 */
import { writeFileSync } from 'node:fs';
import { LeafClient, LeafError } from 'nestjs-leaf/client';
import { requiredEnv } from './required-env';

async function main(): Promise<void> {
  const servers = requiredEnv('LEAF_CLIENT_SERVERS').split(',');
  const tags = requiredEnv('LEAF_CLIENT_TAGS').split(',');
  const runMs = Number(requiredEnv('LEAF_CLIENT_RUN_MS'));
  const rangeSize = Number(requiredEnv('LEAF_CLIENT_RANGE'));
  const client = new LeafClient({
    servers,
    requestTimeoutMs: 1000,
    waitTimeoutMs: 2000,
    backoffMs: 200,
    maxBackoffMs: 1000,
    segment: { minRangeSize: rangeSize, maxRangeSize: rangeSize },
  });
  const ids = new Map<string, string[]>(tags.map((tag) => [tag, []]));
  const errors: Record<string, number> = {};
  const startedAt = Date.now();
  const endAt = startedAt + runMs;
  let tail = 0;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  process.stdout.write('STARTED\n');
  const loop = async (tag: string): Promise<void> => {
    const out = ids.get(tag)!;
    while (Date.now() < endAt) {
      try {
        for (const id of await client.getIds('segment', tag, 10)) out.push(id.toString());
        if (Date.now() > endAt - 3000) tail += 10;
        await sleep(2);
      } catch (error) {
        const code = error instanceof LeafError ? error.code : `untyped ${String(error)}`;
        errors[code] = (errors[code] ?? 0) + 1;
        await sleep(50);
      }
    }
  };
  await Promise.all(tags.map(loop));
  const stats = client.stats();
  await client.close();
  writeFileSync(
    process.argv[2],
    JSON.stringify({
      ids: Object.fromEntries(ids),
      errors,
      tail,
      rangeRequests: stats.rangeRequests,
      rangesReceived: stats.rangesReceived,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : String(error));
  process.exit(1);
});
