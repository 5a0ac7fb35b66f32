import { DataCenterHeldError, RegionLeaseUnavailableError } from '../errors/region-lease.error';
import { LeafErrorCode } from '../errors/leaf.error';
import { TimeLeaseUnavailableError } from '../errors/time-lease-unavailable.error';
import { FakeClock } from '../../testing/fake-clock';
import { InMemoryRegionRegistry } from '../../testing/in-memory-region.registry';
import { InMemoryWorkerStateStores } from '../../testing/in-memory-worker-state.store';
import { LocalWorkerIdSource } from './local-worker-id.source';
import { RegionLease, type RegionLeaseSettings } from './region-lease';
import { regionClaimStep, type RegionLeaseRow } from './region-registry.port';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from './snowflake-layout';
import { SnowflakeWorker } from './snowflake-worker';

const T0 = 1_700_000_000_000;
const LEASE = 60_000;
const MARGIN = 5_000;

const row = (region: string, expiresAt: number, horizon = 0): RegionLeaseRow => ({
  dataCenterId: 3,
  region,
  epoch: 4n,
  expiresAt,
  horizon,
  floor: 0,
});

describe('regionClaimStep (the claim rule)', () => {
  const request = { name: 'leaf', dataCenterId: 3, region: 'eu', leaseMs: 100, horizon: 900 };
  it('inserts a new row at epoch 1; joins its own region’s row, live or not, at the same epoch', () => {
    expect(regionClaimStep(null, request, 1_000)).toMatchObject({
      insert: true,
      row: { epoch: 1n, expiresAt: 1_100, horizon: 900, floor: 0 },
      claimed: { epoch: 1n, floor: 0, how: 'new' },
    });
    for (const expiresAt of [500, 5_000]) {
      // The expiry and horizon only grow: a member's claim never shortens another's proof.
      expect(regionClaimStep(row('eu', expiresAt, 950), request, 1_000)).toEqual({
        insert: false,
        row: { ...row('eu', expiresAt, 950), expiresAt: Math.max(expiresAt, 1_100) },
        claimed: {
          name: 'leaf',
          dataCenterId: 3,
          region: 'eu',
          epoch: 4n,
          floor: 0,
          how: 'joined',
        },
      });
    }
  });

  it('takes another region’s row only once expired (strictly), with epoch + 1 and floor = its horizon', () => {
    const live = row('us', 1_000, 990);
    expect(regionClaimStep(live, request, 1_000)).toEqual({ held: live });
    expect(regionClaimStep(live, request, 1_001)).toMatchObject({
      insert: false,
      row: { dataCenterId: 3, region: 'eu', epoch: 5n, expiresAt: 1_101, horizon: 990, floor: 990 },
      claimed: { region: 'eu', epoch: 5n, floor: 990, how: 'taken' },
    });
  });
});

describe('RegionLease: the horizon rule with a fake clock', () => {
  let clock: FakeClock;
  let registry: InMemoryRegionRegistry;
  /** Monotonic time = wall time + this (a wall step changes it, a pause does not). */
  let monoOffset: number;
  const workers: SnowflakeWorker[] = [];
  let stores: InMemoryWorkerStateStores;

  beforeEach(() => {
    stores = new InMemoryWorkerStateStores();
    clock = new FakeClock(T0);
    registry = new InMemoryRegionRegistry(clock);
    monoOffset = 0;
  });
  afterEach(async () => {
    registry.resume();
    registry.failWith(null);
    await Promise.all(workers.splice(0).map((worker) => worker.stop()));
  });

  const settings = (region: string): RegionLeaseSettings => ({
    region,
    dataCenterId: 3,
    leaseMs: LEASE,
    marginMs: MARGIN,
    callTimeoutMs: 2_000,
  });

  function claim(region: string, startupMaxWaitMs = 5_000): Promise<RegionLease> {
    return clock.drive(
      RegionLease.claim(
        {
          name: 'leaf',
          registry,
          clock,
          monotonic: () => clock.now() + monoOffset,
          startupMaxWaitMs,
          logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
        },
        settings(region),
      ),
    );
  }

  /** A worker of `region`; each region has its own hosts (state stores). */
  async function start(
    region: RegionLease,
    workerId: number,
    files = stores,
  ): Promise<SnowflakeWorker> {
    const worker = await clock.drive(
      SnowflakeWorker.start({
        name: 'leaf',
        snowflake: {
          epoch: DEFAULT_SNOWFLAKE_EPOCH,
          layout: { timestampBits: 41, dataCenterBits: 3, workerBits: 7, sequenceBits: 12 },
          dataCenterId: 3,
          stateDir: 'unused',
          sequenceRandomBound: 0,
          clockBackwardsToleranceMs: 5,
          leaseMs: 10_000,
          heartbeatIntervalMs: 3_000,
          startupMaxWaitMs: 15_000,
          localRunwayMs: 60_000,
        },
        clock,
        source: new LocalWorkerIdSource(workerId),
        stateStore: files.factory,
        tickPollMs: 0,
        region,
      }),
    );
    workers.push(worker);
    return worker;
  }

  it('a claim proves sent + leaseMs − marginMs and records that horizon before use', async () => {
    const lease = await claim('eu');
    expect(lease.bound).toBe(T0 + LEASE - MARGIN);
    expect(lease.claim).toMatchObject({ epoch: 1n, floor: 0, how: 'new' });
    expect(await registry.holder('leaf', 3)).toMatchObject({
      region: 'eu',
      expiresAt: T0 + LEASE,
      horizon: T0 + LEASE - MARGIN,
    });
    expect(lease.snapshot(T0 + 1_000)).toMatchObject({ leftMs: LEASE - MARGIN - 1_000 });
  });

  it('a second region asking for a held data-centre ID is refused, naming the holder and its expiry', async () => {
    await claim('eu');
    const refused = await claim('us').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataCenterHeldError);
    expect(refused).toMatchObject({
      code: LeafErrorCode.DATA_CENTER_HELD,
      holder: 'eu',
      region: 'us',
      expiresAt: T0 + LEASE,
    });
    // A second instance of the same region joins the lease (same epoch).
    expect((await claim('eu')).claim).toMatchObject({ epoch: 1n, how: 'joined' });
  });

  it('a registry that never answers at start: RegionLeaseUnavailableError after startupMaxWaitMs', async () => {
    registry.failWith(new Error('connection refused'));
    const error = await claim('eu', 2_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegionLeaseUnavailableError);
    expect(clock.now() - T0).toBeLessThanOrEqual(2_000);
  });

  it('through an outage shorter than the lease the worker keeps issuing; it stops before the horizon and readiness says how long was proven', async () => {
    const lease = await claim('eu');
    const worker = await start(lease, 1);
    const layout = new SnowflakeLayout(
      DEFAULT_SNOWFLAKE_EPOCH,
      {
        timestampBits: 41,
        dataCenterBits: 3,
        workerBits: 7,
        sequenceBits: 12,
      },
      3,
    );
    expect(layout.decode(await worker.generator.next())).toMatchObject({ dataCenterId: 3 });
    registry.failWith(new Error('registry cut off'));
    // Renewals fail; heartbeats keep the time lease within the region's proof.
    for (let t = 0; t < 50_000; t += 3_000) {
      clock.advance(3_000);
      await expect(worker.renewRegion()).rejects.toBeInstanceOf(RegionLeaseUnavailableError);
      await worker.heartbeat().catch(() => undefined);
      expect(worker.lease.reservedUntil).toBeLessThanOrEqual(lease.bound);
    }
    expect(worker.readiness()).toEqual({ ready: true, reason: null });
    await worker.generator.next(); // 51 s in: still serving
    clock.set(lease.bound);
    await worker.heartbeat().catch(() => undefined);
    expect(typeof (await worker.generator.next())).toBe('bigint'); // the last proven millisecond
    clock.set(lease.bound + 1);
    const refused = await worker.generator.next().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TimeLeaseUnavailableError);
    expect((refused as TimeLeaseUnavailableError).reason).toMatch(
      /data-centre ID 3.*proven only until/,
    );
    expect(worker.readiness()).toMatchObject({
      ready: false,
      reason: expect.stringMatching(/proven only until/),
    });
    expect(worker.snapshot().region).toMatchObject({ leftMs: 0, region: 'eu', dataCenterId: 3 });
    // The registry back: a renewal proves the lease again and the worker serves at once.
    registry.failWith(null);
    await worker.renewRegion();
    expect(worker.readiness()).toEqual({ ready: true, reason: null });
    expect(typeof (await worker.generator.next())).toBe('bigint');
  });

  it('proves whole milliseconds only (the time lease’s stores keep integers)', async () => {
    const lease = await claim('eu');
    clock.advance(10);
    registry.stall();
    const renewal = lease.renew();
    monoOffset += 0.375; // performance.now() is fractional: 0.375 ms pass during the call
    registry.resume();
    await renewal;
    expect(lease.bound).toBe(T0 + 10 + LEASE - MARGIN - 1);
  });

  it('an answer later than leaseMs − marginMs on the monotonic clock proves nothing more', async () => {
    const lease = await claim('eu');
    const before = lease.bound;
    registry.stall();
    const renewal = lease.renew();
    clock.advance(1_500); // within callTimeoutMs (2 s)
    monoOffset += 58_000; // …but the monotonic clock says the host was suspended for most of the lease
    registry.resume();
    await renewal;
    expect(lease.bound).toBe(before);
  });

  it('a region paused past its lease while another takes the ID stops for good; the taker starts past its horizon', async () => {
    const eu = await claim('eu');
    const euWorker = await start(eu, 1);
    const lastEu = euWorker.generator.lastIssuedTimestamp;
    await euWorker.generator.next();
    // eu freezes (no renewal); its lease expires on the registry's clock and us takes the ID.
    clock.advance(LEASE + 1);
    const us = await claim('us');
    expect(us.claim).toMatchObject({ epoch: 2n, how: 'taken', floor: T0 + LEASE - MARGIN });
    const usWorker = await start(us, 1, new InMemoryWorkerStateStores());
    expect(usWorker.snapshot().startupBound).toBeGreaterThanOrEqual(T0 + LEASE - MARGIN);
    expect(lastEu).toBeLessThanOrEqual(T0 + LEASE - MARGIN);
    // eu wakes: nothing issued, its renewal finds another epoch and revokes for good.
    await expect(euWorker.generator.next()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    await expect(euWorker.renewRegion()).rejects.toBeInstanceOf(RegionLeaseUnavailableError);
    expect(euWorker.snapshot().lease.revoked).toMatch(/taken by another region/);
    expect(euWorker.readiness().ready).toBe(false);
    expect(await registry.renew(eu.claim, LEASE, T0 * 2)).toBe(false);
    expect(typeof (await usWorker.generator.next())).toBe('bigint');
  });
});
