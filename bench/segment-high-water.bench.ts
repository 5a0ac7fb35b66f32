/**
 * Cost of the high-water mark (`npm run bench:high-water`): p50/p99 of one range load
 * (`MysqlLeafAllocStore.allocate`, one transaction on MariaDB) without the mark and with it
 * (plus one ZooKeeper read and one compare-and-set while the row is locked), in the same run.
 * The two stores alternate call by call on their own tags, so machine load drifts over both
 * alike. Off the hot path by construction: this is paid once per range, never per ID.
 *
 * Against the shared MariaDB (`LEAF_TEST_MYSQL_URL`'s server) and ZooKeeper
 * (`LEAF_ZK_ADDRESS`, default 127.0.0.1:2181), on a private database and namespace.
 * Options: `BENCH_SECONDS` (allocations = 100 × seconds per store, at least 200), `--quick`.
 */
import { randomBytes } from 'node:crypto';
import { MysqlLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { ZookeeperHighWaterStore } from '@app/leaf/adapters/zookeeper/zookeeper-high-water.store';
import { deleteTree, connectZookeeperAdmin } from '../test/support/zookeeper';
import { fmt, ms, type BenchModule } from './support/report';
import { runAlone } from './support/run';
import { withBenchDatabase } from './support/segment-module';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const cell = (samples: number[]): string => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))} (max ${ms(sorted[sorted.length - 1]!)})`;
};

/** p50/p99 of a range load without and with the high-water mark. */
export const bench: BenchModule = {
  name: 'segment-high-water',
  title: 'Segment high-water mark: range load latency (MariaDB + ZooKeeper)',
  run(context) {
    const count = context.quick ? 50 : Math.max(200, 100 * context.seconds);
    return withBenchDatabase({ plain: 1000, fenced: 1000 }, async (_db, dataSource) => {
      const zk = await connectZookeeperAdmin();
      const name = `bench-hwm-${randomBytes(4).toString('hex')}`;
      try {
        const plain = new MysqlLeafAllocStore(dataSource);
        const fenced = new MysqlLeafAllocStore(dataSource, {
          highWater: new ZookeeperHighWaterStore(zk, name),
        });
        const timed = async (store: MysqlLeafAllocStore, tag: string): Promise<number> => {
          const started = performance.now();
          await store.allocate(tag);
          return performance.now() - started;
        };
        // Warm-up: connections, the mark's node, JIT.
        for (let i = 0; i < 20; i++) {
          await timed(plain, 'plain');
          await timed(fenced, 'fenced');
        }
        const without: number[] = [];
        const withMark: number[] = [];
        for (let i = 0; i < count; i++) {
          // Alternate which goes first, so neither always follows the other.
          if (i % 2 === 0) {
            without.push(await timed(plain, 'plain'));
            withMark.push(await timed(fenced, 'fenced'));
          } else {
            withMark.push(await timed(fenced, 'fenced'));
            without.push(await timed(plain, 'plain'));
          }
        }
        context.log(`without the mark: ${cell(without)}`);
        context.log(`with the mark:    ${cell(withMark)}`);
        const p50 = (s: number[]) =>
          percentile(
            [...s].sort((a, b) => a - b),
            50,
          );
        return [
          {
            measurement: `one range load (\`allocate\`), ${fmt(count)} per store, alternating, sequential`,
            figure: `with the mark: ${cell(withMark)}`,
            baseline: `without: ${cell(without)}`,
            ratio: `p50 +${ms(p50(withMark) - p50(without))}`,
            target: 'paid once per range, never per ID',
            met: true,
          },
        ];
      } finally {
        await deleteTree(zk, `/segment/${name}`).catch(() => undefined);
        await zk.close();
      }
    });
  },
};

if (require.main === module) runAlone(bench);
