import { IdOriginUnknownError } from '../../core/errors/id-origin-unknown.error';
import { InvalidArgumentError } from '../../core/errors/invalid-argument.error';
import { ModeDisabledError } from '../../core/errors/mode-disabled.error';
import { FakeClock } from '../../testing/fake-clock';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { InMemoryWorkerLeaseStore } from '../../testing/in-memory-worker-lease.store';
import { rejectionOf } from '../../testing/test-helpers';
import type { LeafModuleOptions } from '../leaf-options.interface';
import { resolveLeafOptions } from '../leaf-options.resolver';
import { workerIdSource } from '../coordination.assembly';
import { SnowflakeService } from '../snowflake/snowflake.service';
import { IdWhoisService } from './id-whois.service';

const noZk = () => {
  throw new Error('no ZooKeeper here');
};

/** The service over in-memory stores, with `raw` options (the journal on unless said). */
function whoisWith(
  raw: LeafModuleOptions,
  store: InMemoryAllocStore | null = new InMemoryAllocStore(),
) {
  const options = resolveLeafOptions({
    journal: true,
    ...raw,
    segment: store ? { store } : false,
  });
  const snowflake = options.snowflake
    ? new SnowflakeService(options, workerIdSource(options, noZk))
    : undefined;
  return {
    options,
    service: new IdWhoisService(options, store ?? undefined, snowflake),
    snowflake,
  };
}

describe('IdWhoisService', () => {
  it('segment and sequence: the journalled range holding the ID, as the store recorded it', async () => {
    const store = new InMemoryAllocStore().setTag('orders', 10, 1n);
    const { service } = whoisWith({ instance: 'pod-a' }, store);
    await store.allocate('orders', undefined, undefined, {
      mode: 'segment',
      instance: 'pod-a',
      term: null,
    });
    await store.allocate('orders', undefined, undefined, {
      mode: 'sequence',
      instance: 'pod-b',
      term: 7n,
    });
    expect(await service.whois('segment', '9', 'orders')).toMatchObject({
      id: 9n,
      mode: 'segment',
      start: 1n,
      end: 11n,
      instance: 'pod-a',
      term: null,
      database: null,
    });
    // The range says which mode it was granted to, whatever was asked.
    expect(await service.whois('segment', 11n, 'orders')).toMatchObject({
      mode: 'sequence',
      instance: 'pod-b',
      term: 7n,
    });
    const unknown = await rejectionOf(service.whois('segment', '21', 'orders'));
    expect(unknown).toBeInstanceOf(IdOriginUnknownError);
    expect(unknown).toMatchObject({ code: 'LEAF_ID_ORIGIN_UNKNOWN', id: '21' });
  });

  it('refuses a malformed ID, mode or tag before any look-up', async () => {
    const store = new InMemoryAllocStore();
    const { service } = whoisWith({}, store);
    for (const id of ['0', '-1', '01', '9223372036854775808', 'x', '1.5']) {
      expect(await rejectionOf(service.whois('segment', id, 'orders'))).toBeInstanceOf(
        InvalidArgumentError,
      );
    }
    expect(await rejectionOf(service.whois('segment', '5'))).toMatchObject({ argument: 'tag' });
    expect(await rejectionOf(service.whois('segment', '5', 'a\u0000b'))).toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(await rejectionOf(service.whois('other' as 'segment', '5', 'orders'))).toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(store.calls).toEqual([]);
  });

  it('says the journal is off, and a mode that is off', async () => {
    const { service } = whoisWith({ journal: false });
    expect((await rejectionOf(service.whois('segment', '5', 'orders'))).message).toMatch(
      /journal is off/,
    );
    const { service: none } = whoisWith({}, null);
    expect(await rejectionOf(none.whois('segment', '5', 'orders'))).toBeInstanceOf(
      ModeDisabledError,
    );
    expect(await rejectionOf(none.whois('snowflake', '5'))).toBeInstanceOf(ModeDisabledError);
  });

  it('snowflake on leased worker IDs: the holder of the worker ID in the ID’s millisecond', async () => {
    const clock = new FakeClock(1_800_000_000_000);
    const leases = new InMemoryWorkerLeaseStore(clock);
    const { service, snowflake } = whoisWith({
      clock,
      instance: 'pod-a',
      snowflake: { database: { store: leases }, advertise: 'a:1' },
    });
    const request = { name: 'leaf', run: 'r', leaseMs: 1_000, maxWorkerId: 1023 };
    const first = await leases.claim({ ...request, holder: 'a:1', journal: { instance: 'pod-a' } });
    if (!('claimed' in first)) throw new Error('no claim');
    await leases.release(first.claimed, clock.now() + 100);
    clock.advance(500);
    await leases.claim({ ...request, holder: 'c:1', run: 'rc', journal: { instance: 'pod-c' } });
    const layout = snowflake!.layout;
    const before = layout.compose(clock.now() - 450, 0, 1);
    const after = layout.compose(clock.now() + 10, 0, 1);
    expect(await service.whois('snowflake', before)).toMatchObject({
      mode: 'snowflake',
      workerId: 0,
      workerSource: 'database',
      instance: 'pod-a',
      holder: 'a:1',
      epoch: 1n,
      until: new Date(clock.now() - 400),
    });
    expect(await service.whois('snowflake', after)).toMatchObject({
      instance: 'pod-c',
      holder: 'c:1',
      run: 'rc',
      epoch: 2n,
      until: null,
    });
    expect(
      await rejectionOf(service.whois('snowflake', layout.compose(clock.now(), 5, 0))),
    ).toBeInstanceOf(IdOriginUnknownError);
  });

  it('snowflake on a configured worker ID: the fields, and that nobody records the holder', async () => {
    const { service, snowflake } = whoisWith({ snowflake: { workerId: 4 } });
    const id = snowflake!.layout.compose(1_800_000_000_000, 4, 9);
    expect(await service.whois('snowflake', id)).toMatchObject({
      workerId: 4,
      sequence: 9,
      timestamp: 1_800_000_000_000,
      workerSource: 'explicit',
      instance: null,
      holder: null,
      note: expect.stringContaining('nobody records'),
    });
  });
});
