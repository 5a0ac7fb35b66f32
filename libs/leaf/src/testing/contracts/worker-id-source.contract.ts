import type { Clock } from '../../core/clock';
import { SnowflakeWorker } from '../../core/snowflake/snowflake-worker';
import type { WorkerIdSource } from '../../core/snowflake/worker-id-source.port';
import { InMemoryWorkerStateStores } from '../in-memory-worker-state.store';
import { TEST_SNOWFLAKE_SETTINGS } from '../snowflake-fixtures';
import { defineContract } from './contract-runner';

/** What {@link workerIdSourceContract} needs of one adapter. */
export interface WorkerIdSourceHarness {
  /**
   * A new source (a new client where it has one) for instance `instance` (0, 1, ...: each its
   * own identity) of the deployment; every source of a harness shares one coordinator.
   */
  sourceFor(instance: number): WorkerIdSource;
  /** The clock the coordinator and the workers share. */
  readonly clock: Clock;
  /** Releases what `open` acquired (runs once, after the last case). */
  close(): Promise<void>;
}

let serial = 0;

/**
 * The behaviour every `WorkerIdSource` must have (docs/design.md, "Coordination ports"), seen
 * through the workers started on it: live instances hold distinct worker IDs and the source
 * lists them; a heartbeat renews the lease; a stop releases the worker ID, and a restart of
 * the same instance issues only after the last ID issued before.
 */
export const workerIdSourceContract = defineContract<WorkerIdSourceHarness>(
  'WorkerIdSource',
  (harness, runner) => {
    const { it, expect, afterEach } = runner;
    const running: Array<{ worker: SnowflakeWorker; source: WorkerIdSource }> = [];
    let namespace = '';
    /** One host's state files per instance, kept across its restarts. */
    let states = new Map<number, InMemoryWorkerStateStores>();

    afterEach(async () => {
      for (const { worker, source } of running.splice(0)) {
        await worker.stop();
        await source.close();
      }
      namespace = `contract${Date.now().toString(36)}${(serial++).toString(36)}`;
      states = new Map();
    });

    async function start(
      instance: number,
    ): Promise<{ worker: SnowflakeWorker; source: WorkerIdSource }> {
      namespace ||= `contract${Date.now().toString(36)}${(serial++).toString(36)}`;
      if (!states.has(instance)) states.set(instance, new InMemoryWorkerStateStores());
      const source = harness().sourceFor(instance);
      const worker = await SnowflakeWorker.start({
        name: namespace,
        snowflake: TEST_SNOWFLAKE_SETTINGS,
        clock: harness().clock,
        source,
        stateStore: states.get(instance)!.factory,
      });
      const started = { worker, source };
      running.push(started);
      return started;
    }

    it('live instances hold distinct worker IDs, and the source lists them', async () => {
      const a = await start(0);
      const b = await start(1);
      expect(a.worker.workerId).not.toBe(b.worker.workerId);
      const listed = await a.source.list(namespace, harness().clock.now());
      for (const { worker } of [a, b]) {
        expect(listed.find((info) => info.workerId === worker.workerId)).toMatchObject({
          alive: true,
        });
      }
      expect(a.worker.snapshot().mode).toBe(a.source.kind);
    });

    it('a heartbeat renews the lease', async () => {
      const { worker } = await start(0);
      const before = worker.lease.reservedUntil;
      await new Promise((resolve) => setTimeout(resolve, 20));
      await worker.heartbeat();
      expect(worker.lease.reservedUntil).toBeGreaterThan(before);
      expect(worker.readiness()).toEqual({ ready: true, reason: null });
    });

    it('a stop releases the worker ID; a restart issues only after the last ID issued', async () => {
      const first = await start(0);
      const ids = await first.worker.generator.take(3);
      const last = ids[ids.length - 1]!;
      await first.worker.stop();
      await first.source.close();
      running.splice(running.indexOf(first), 1);
      const again = await start(0);
      const next = await again.worker.generator.next();
      if (again.worker.workerId === first.worker.workerId) expect(next).toBeGreaterThan(last);
      expect(again.worker.snapshot().startupBound).toBeGreaterThanOrEqual(
        first.worker.layout.decode(last).timestamp - 1,
      );
    });
  },
);
