import { LeafErrorCode } from '../../core/errors/leaf.error';
import { WorkerStateCorruptError } from '../../core/errors/worker-state-corrupt.error';
import { WorkerStateLockedError } from '../../core/errors/worker-state-locked.error';
import type {
  WorkerIdentity,
  WorkerStateLockHandle,
  WorkerStateReadResult,
  WorkerStateStore,
  WorkerStateUpdate,
} from '../../core/snowflake/worker-state';
import { rejectionOf } from '../test-helpers';
import { globalContractRunner, type ContractRunner } from './contract-runner';

/** What {@link workerStateStoreContract} needs of one implementation. */
export interface WorkerStateStoreHarness {
  /**
   * The store of `identity`. Two calls for one identity are two handles on the same state
   * and the same lock (as two workers, or two processes, on one state directory).
   */
  storeFor(identity: WorkerIdentity): WorkerStateStore;
  /** Replaces the raw stored text of `identity`'s state (a torn, edited or copied file). */
  writeRaw(identity: WorkerIdentity, text: string): Promise<void>;
  /** Releases what `open` acquired (runs after every case). */
  close(): Promise<void>;
}

const zk: WorkerIdentity = { kind: 'zookeeper', name: 'orders', ip: '10.0.0.8', port: 8080 };
const zkOtherPort: WorkerIdentity = { ...zk, port: 8081 };
const zkOtherName: WorkerIdentity = { ...zk, name: 'payments' };
const embedded: WorkerIdentity = { kind: 'embedded', name: 'orders', workerId: 12 };
const leased: WorkerIdentity = { kind: 'database', name: 'orders', holder: '10.0.0.8:8080' };

const zkUpdate: WorkerStateUpdate = {
  workerId: 7,
  reservedUntil: 1_700_000_010_000,
  zkNode: '/snowflake/orders/forever/10.0.0.8:8080-0000000007',
  zkSyncedAt: 1_700_000_000_000,
  zkHorizon: 1_700_000_060_000,
  run: 'run-a1b2c3',
  updatedAt: 1_700_000_000_500,
};
const embeddedUpdate: WorkerStateUpdate = {
  workerId: 12,
  reservedUntil: 1_700_000_020_000,
  zkNode: null,
  zkSyncedAt: null,
  zkHorizon: null,
  run: 'run-d4e5f6',
  updatedAt: 1_700_000_001_000,
};

/** The raw JSON a version-2 state of `zk` has on disk. */
const zkJson = (overrides: Record<string, unknown> = {}): string =>
  JSON.stringify({
    version: 2,
    name: 'orders',
    identity: '10.0.0.8:8080',
    ...zkUpdate,
    ...overrides,
  });

/** The error of a `corrupt` result (fails the case for any other status). */
function corruptionOf(result: WorkerStateReadResult): WorkerStateCorruptError {
  if (result.status !== 'corrupt') {
    throw new Error(`expected status "corrupt", got ${JSON.stringify(result)}`);
  }
  return result.error;
}

/**
 * The behaviour every {@link WorkerStateStore} must have, as test cases (Jest's or Vitest's, {@link ContractRunner}): registers a
 * `describe` block named after `name`. `open` runs before every case (a fresh, empty "state
 * directory"); locks a case takes are released after it.
 *
 * Cases: missing → `{status: 'missing'}`; write then read round trip (version 2, identity
 * fields from the owner, ZooKeeper and embedded); a later write replaces the state; version 1
 * content read with `run`/`zkHorizon` null; states of other identities independent; another
 * identity's content, invalid JSON, an empty file, a non-object and bad fields → `corrupt`
 * with a `WorkerStateCorruptError` naming the store's path, never a throw; a write repairs a
 * corrupt state; the lock is exclusive (a second `lock()`, on another handle of the same
 * identity too, rejects `WorkerStateLockedError`, code `LEAF_WORKER_STATE_LOCKED`, naming the
 * holder), `release()` lets the next holder in, is idempotent and never frees a later
 * holder's lock; locks of two identities are independent; the holder may write.
 */
export function workerStateStoreContract(
  name: string,
  open: () => Promise<WorkerStateStoreHarness>,
  runner: ContractRunner = globalContractRunner(),
): void {
  const { describe, it, expect, beforeEach, afterEach } = runner;
  describe(`WorkerStateStore contract: ${name}`, () => {
    let harness: WorkerStateStoreHarness;
    let handles: WorkerStateLockHandle[] = [];

    /** Takes the lock of `store`; released after the case. */
    const lock = async (store: WorkerStateStore, startedAt: number) => {
      const handle = await store.lock(startedAt);
      handles.push(handle);
      return handle;
    };

    beforeEach(async () => {
      harness = await open();
    });

    afterEach(async () => {
      await Promise.all(handles.map((handle) => handle.release()));
      handles = [];
      await harness?.close();
    });

    it('reads a state that was never written as missing', async () => {
      const store = harness.storeFor(zk);
      expect(typeof store.path).toBe('string');
      expect(store.path).not.toBe('');
      expect(await store.read()).toEqual({ status: 'missing' });
      expect(await harness.storeFor(embedded).read()).toEqual({ status: 'missing' });
    });

    it('reads back what it wrote, as version 2 with the identity fields of its owner', async () => {
      await harness.storeFor(zk).write(zkUpdate);
      // Another handle on the same identity sees it too.
      expect(await harness.storeFor(zk).read()).toEqual({
        status: 'ok',
        state: { version: 2, name: 'orders', identity: '10.0.0.8:8080', ...zkUpdate },
      });

      const store = harness.storeFor(embedded);
      await store.write(embeddedUpdate);
      expect(await store.read()).toEqual({
        status: 'ok',
        state: { version: 2, name: 'orders', identity: 'embedded', ...embeddedUpdate },
      });
    });

    it('keeps a database-leased identity apart from the same address in ZooKeeper, whatever worker ID it records', async () => {
      await harness.storeFor(zk).write(zkUpdate);
      const update = { ...embeddedUpdate, workerId: 5, zkHorizon: 1_700_000_030_000 };
      await harness.storeFor(leased).write(update);
      expect(await harness.storeFor(leased).read()).toEqual({
        status: 'ok',
        state: { version: 2, name: 'orders', identity: 'database:10.0.0.8:8080', ...update },
      });
      expect(await harness.storeFor(zk).read()).toMatchObject({ state: { workerId: 7 } });
      // The next lease may be another worker ID: the same file records it.
      await harness.storeFor(leased).write({ ...update, workerId: 9 });
      expect(await harness.storeFor(leased).read()).toMatchObject({ state: { workerId: 9 } });
    });

    it('replaces the state on every write', async () => {
      const store = harness.storeFor(zk);
      await store.write(zkUpdate);
      const later = { ...zkUpdate, reservedUntil: zkUpdate.reservedUntil + 5_000, run: 'run-2' };
      await store.write(later);
      expect(await store.read()).toEqual({
        status: 'ok',
        state: { version: 2, name: 'orders', identity: '10.0.0.8:8080', ...later },
      });
    });

    it('reads version 1 content with run and zkHorizon null', async () => {
      const { run: _run, zkHorizon: _horizon, ...v1 } = zkUpdate;
      await harness.writeRaw(
        zk,
        JSON.stringify({ version: 1, name: 'orders', identity: '10.0.0.8:8080', ...v1 }),
      );
      expect(await harness.storeFor(zk).read()).toEqual({
        status: 'ok',
        state: {
          version: 2,
          name: 'orders',
          identity: '10.0.0.8:8080',
          ...v1,
          run: null,
          zkHorizon: null,
        },
      });
    });

    it('keeps the states of other identities apart', async () => {
      await harness.storeFor(zk).write(zkUpdate);
      for (const other of [zkOtherPort, zkOtherName, embedded]) {
        expect(harness.storeFor(other).path).not.toBe(harness.storeFor(zk).path);
        expect(await harness.storeFor(other).read()).toEqual({ status: 'missing' });
      }
    });

    it("refuses another identity's content (a copied file) as corrupt", async () => {
      await harness.writeRaw(zk, zkJson({ identity: '10.0.0.9:8080' }));
      const error = corruptionOf(await harness.storeFor(zk).read());
      expect(error).toBeInstanceOf(WorkerStateCorruptError);
      expect(error.code).toBe(LeafErrorCode.WORKER_STATE_CORRUPT);
      expect(error.source).toBe(harness.storeFor(zk).path);
      expect(error.reason).toMatch(/belongs to/);

      await harness.writeRaw(zk, zkJson({ name: 'payments' }));
      expect(corruptionOf(await harness.storeFor(zk).read()).reason).toMatch(/belongs to/);
    });

    it.each([
      ['invalid JSON', '{"version": 2, "name": '],
      ['an empty file', ''],
      ['a JSON array', '[]'],
      ['JSON null', 'null'],
    ])('reads %s as corrupt, never throwing', async (_what, text) => {
      await harness.writeRaw(zk, text);
      const error = corruptionOf(await harness.storeFor(zk).read());
      expect(error).toBeInstanceOf(WorkerStateCorruptError);
      expect(error.code).toBe(LeafErrorCode.WORKER_STATE_CORRUPT);
      expect(error.source).toBe(harness.storeFor(zk).path);
    });

    it.each<[string, Record<string, unknown>]>([
      ['an unknown version', { version: 3 }],
      ['a worker ID out of range', { workerId: 1024 }],
      ['a negative worker ID', { workerId: -1 }],
      ['a negative reservedUntil', { reservedUntil: -1 }],
      ['a reservedUntil that is not a number', { reservedUntil: '1700000010000' }],
      ['no updatedAt', { updatedAt: undefined }],
      ['no zkNode in ZooKeeper mode', { zkNode: null }],
      ['a zkHorizon that is not a timestamp', { zkHorizon: 1.5 }],
      ['a run that is not a string', { run: 42 }],
    ])('reads a state with %s as corrupt', async (_what, overrides) => {
      await harness.writeRaw(zk, zkJson(overrides));
      const error = corruptionOf(await harness.storeFor(zk).read());
      expect(error).toBeInstanceOf(WorkerStateCorruptError);
      expect(error.code).toBe(LeafErrorCode.WORKER_STATE_CORRUPT);
    });

    it('reads an embedded state recording another worker ID as corrupt', async () => {
      await harness.writeRaw(
        embedded,
        JSON.stringify({
          version: 2,
          name: 'orders',
          identity: 'embedded',
          ...embeddedUpdate,
          workerId: 13,
        }),
      );
      const error = corruptionOf(await harness.storeFor(embedded).read());
      expect(error.code).toBe(LeafErrorCode.WORKER_STATE_CORRUPT);
    });

    it('repairs a corrupt state with a write', async () => {
      await harness.writeRaw(zk, '{ torn');
      const store = harness.storeFor(zk);
      expect((await store.read()).status).toBe('corrupt');
      await store.write(zkUpdate);
      expect(await store.read()).toMatchObject({ status: 'ok', state: zkUpdate });
    });

    it('holds the lock exclusively, on every handle of the identity, until release()', async () => {
      const store = harness.storeFor(zk);
      const first = await lock(store, 1_000);
      expect(typeof first.path).toBe('string');

      for (const contender of [store, harness.storeFor(zk)]) {
        const error = await rejectionOf(contender.lock(2_000));
        expect(error).toBeInstanceOf(WorkerStateLockedError);
        expect((error as WorkerStateLockedError).code).toBe(LeafErrorCode.WORKER_STATE_LOCKED);
        expect((error as WorkerStateLockedError).lockPath).toBe(first.path);
        // It names the holder (the first locker's start time), not the contender.
        expect((error as WorkerStateLockedError).holder).toMatch(/"startedAt":\s*1000\b/);
      }

      // The holder may write and read its state.
      await store.write(zkUpdate);
      expect((await store.read()).status).toBe('ok');

      await first.release();
      const second = await lock(harness.storeFor(zk), 3_000);
      expect(second.path).toBe(first.path);
    });

    it('release() is idempotent and never frees a later holder', async () => {
      const first = await lock(harness.storeFor(zk), 1_000);
      await first.release();
      await first.release();
      const second = await lock(harness.storeFor(zk), 2_000);
      await first.release(); // a stale handle
      expect(await rejectionOf(harness.storeFor(zk).lock(3_000))).toBeInstanceOf(
        WorkerStateLockedError,
      );
      await second.release();
      await lock(harness.storeFor(zk), 4_000);
    });

    it('locks identities independently', async () => {
      await lock(harness.storeFor(zk), 1_000);
      const others = [zkOtherPort, zkOtherName, embedded];
      const handlesOfOthers = await Promise.all(
        others.map((identity) => lock(harness.storeFor(identity), 1_000)),
      );
      expect(new Set([...handlesOfOthers.map((handle) => handle.path)]).size).toBe(3);
      for (const identity of [zk, ...others]) {
        expect(await rejectionOf(harness.storeFor(identity).lock(2_000))).toBeInstanceOf(
          WorkerStateLockedError,
        );
      }
    });
  });
}
