import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { LeafErrorCode } from '../../core/errors/leaf.error';
import { leafErrorFromBody } from '../../core/errors/leaf-error-from-body';
import { IdService } from '../../core/id.service';
import type { ForwardResult, SequenceForwardTransport } from '../../core/sequence/forward-batcher';
import { eventually } from '../../testing/eventually';
import { FakeZkClient } from '../../testing/fake-zk.client';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { LEAF_SEQUENCE_TRANSPORT, LEAF_ZK_CLIENT_FACTORY } from '../leaf.constants';
import { LeafModule } from '../leaf.module';
import { SequenceService } from './sequence.service';

const SESSION_MS = 2000;

/** Instances by address: the fake transport calls the issuer's service in-process. */
type Registry = Map<string, SequenceService>;

function inProcessTransport(registry: Registry, batches: number[]): SequenceForwardTransport {
  return {
    probe: async (address) => {
      const instance = registry.get(address);
      if (!instance) throw new Error(`connect ECONNREFUSED ${address}`);
      return instance.instance();
    },
    send: async (address, items) => {
      batches.push(items.length);
      const issuer = registry.get(address);
      if (!issuer) throw new Error(`connect ECONNREFUSED ${address}`);
      const answers = await issuer.issueForwarded(items);
      return answers.map((answer, i): ForwardResult => {
        if ('error' in answer) {
          return {
            error: leafErrorFromBody(answer.error.statusCode, JSON.stringify(answer.error), {
              mode: 'sequence',
              key: items[i]!.key,
            })!,
          };
        }
        return { start: BigInt(answer.start), end: BigInt(answer.end) };
      });
    },
    close: () => undefined,
  };
}

describe('LeafModule (sequence wiring)', () => {
  const modules: TestingModule[] = [];
  afterEach(async () => {
    for (const moduleRef of modules.splice(0)) await moduleRef.close();
  });

  /** Instance a (http://a) on a fresh ZooKeeper, registry and store (tag `k`, step 100). */
  async function firstInstance() {
    const store = new InMemoryAllocStore().setTag('k', 100);
    const zk = new FakeZkClient();
    const registry: Registry = new Map();
    const a = await boot('http://a', zk, store, registry, []);
    return { store, zk, registry, a };
  }

  async function boot(
    address: string,
    zk: FakeZkClient,
    store: InMemoryAllocStore,
    registry: Registry,
    batches: number[],
    groups = 1,
  ) {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        LeafModule.forRoot({
          segment: { store },
          sequence: {
            // The shortest session: a new issuer waits this long before its first ID.
            zookeeper: { connect: 'fake:2181', sessionTimeoutMs: SESSION_MS },
            advertise: address,
            groups,
            heartbeatIntervalMs: 50,
            leaseMarginMs: 500,
            waitMs: 3000,
          },
        }),
      ],
    })
      .overrideProvider(LEAF_ZK_CLIENT_FACTORY)
      .useValue(() => zk)
      .overrideProvider(LEAF_SEQUENCE_TRANSPORT)
      .useValue(inProcessTransport(registry, batches))
      .compile();
    await moduleRef.init();
    modules.push(moduleRef);
    const sequence = moduleRef.get(SequenceService);
    registry.set(address, sequence);
    return { moduleRef, ids: moduleRef.get(IdService), sequence };
  }

  it('serves IdService.get/getIds("sequence") in order through the issuer and a forwarding instance', async () => {
    const store = new InMemoryAllocStore().setTag('k', 100).setTag('j', 100);
    const zk = new FakeZkClient();
    const registry: Registry = new Map();
    const batches: number[] = [];
    const a = await boot('http://a', zk, store, registry, batches);
    const b = await boot('http://b', zk.newSession(), store, registry, batches);
    await eventually(() =>
      expect(a.sequence.stats().groups.map((g) => g.state)).toEqual(['issuer']),
    );
    // Elected in a session younger than the session timeout: not serving yet, and not ready.
    expect(a.sequence.readiness()).toMatchObject({
      ready: false,
      reason: expect.stringMatching(
        /^group 0: this instance was elected and starts issuing in \d+ ms$/,
      ),
      groupsWithoutIssuer: [0],
    });
    await eventually(() =>
      expect(b.sequence.stats().groups.map((g) => g.issuer)).toEqual(['http://a']),
    );
    // b forwards to a, which does not issue yet: b is not ready either.
    await eventually(() =>
      expect(b.sequence.readiness()).toMatchObject({
        ready: false,
        reason: 'group 0: the issuer at http://a does not issue it yet',
      }),
    );
    expect(a.sequence.stats().groups[0]!.startsInMs).toBeGreaterThan(0);
    await eventually(
      () =>
        expect(a.sequence.readiness()).toEqual({
          ready: true,
          groupsWithoutIssuer: [],
          unreachableIssuers: [],
          advertiseChecked: true,
          coordination: 'zookeeper',
        }),
      SESSION_MS + 1000,
    );
    await eventually(() => expect(b.sequence.readiness().ready).toBe(true));
    const seen: bigint[] = [];
    for (let i = 0; i < 20; i++) {
      const via = i % 2 === 0 ? a.ids : b.ids;
      if (i % 3 === 0) seen.push(...(await via.getIds('sequence', 'k', 3)));
      else seen.push(await via.get('sequence', 'k'));
    }
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
    // Concurrent calls of one turn on B travel as one batch with one item per key.
    batches.length = 0;
    const together = await Promise.all([
      b.ids.get('sequence', 'k'),
      b.ids.get('sequence', 'k'),
      b.ids.getIds('sequence', 'j', 5),
    ]);
    expect(batches).toEqual([2]);
    expect(together[1]).toBeGreaterThan(together[0] as bigint);
    expect(b.sequence.stats().forwardedCalls).toBeGreaterThan(10);
  });

  it('an unknown tag is the issuer’s TagNotFoundError, also through a forwarding instance', async () => {
    const store = new InMemoryAllocStore().setTag('k', 10);
    const zk = new FakeZkClient();
    const registry: Registry = new Map();
    const a = await boot('http://a', zk, store, registry, []);
    const b = await boot('http://b', zk.newSession(), store, registry, []);
    await eventually(() => expect(b.sequence.stats().groups[0]!.issuer).toBe('http://a'));
    await expect(a.ids.get('sequence', 'nope')).rejects.toMatchObject({
      code: LeafErrorCode.TAG_NOT_FOUND,
    });
    await expect(b.ids.get('sequence', 'nope')).rejects.toMatchObject({
      code: LeafErrorCode.TAG_NOT_FOUND,
    });
  });

  it('a graceful stop of the issuer hands over: the other instance issues above it', async () => {
    const { store, zk, registry, a } = await firstInstance();
    const b = await boot('http://b', zk.newSession(), store, registry, []);
    const before = await a.ids.getIds('sequence', 'k', 5);
    await a.moduleRef.close();
    modules.splice(modules.indexOf(a.moduleRef), 1);
    registry.delete('http://a');
    const after = await b.ids.get('sequence', 'k');
    expect(after).toBeGreaterThan(before[4]!);
  });

  it('without ZooKeeper the calls wait sequence.waitMs, then LEAF_SEQUENCE_NO_ISSUER', async () => {
    const store = new InMemoryAllocStore().setTag('k', 10);
    const zk = new FakeZkClient();
    zk.setUnavailable(true);
    const a = await boot('http://a', zk, store, new Map(), []);
    expect(a.sequence.readiness()).toEqual({
      ready: false,
      reason: 'ZooKeeper is not connected',
      groupsWithoutIssuer: [0],
      unreachableIssuers: [],
      advertiseChecked: false,
      coordination: 'zookeeper',
    });
    await expect(a.ids.get('sequence', 'k')).rejects.toMatchObject({
      code: LeafErrorCode.SEQUENCE_NO_ISSUER,
      retryAfterMs: 1000,
    });
  }, 15_000);

  it('spreads the groups: the first instance hands groups over until each issues its share', async () => {
    const store = new InMemoryAllocStore().setTag('k', 100).setTag('j', 100);
    const zk = new FakeZkClient();
    const registry: Registry = new Map();
    const a = await boot('http://a', zk, store, registry, [], 4);
    await eventually(() =>
      expect(a.sequence.stats().groups.every((g) => g.state === 'issuer')).toBe(true),
    );
    const b = await boot('http://b', zk.newSession(), store, registry, [], 4);
    const issuing = (s: SequenceService) =>
      s.stats().groups.filter((g) => g.state === 'issuer').length;
    await eventually(() => {
      expect(issuing(a.sequence)).toBe(2);
      expect(issuing(b.sequence)).toBe(2);
    }, 3 * SESSION_MS);
    // Every group has one issuer, and calls through either instance keep their order.
    await eventually(() => expect(b.sequence.readiness().ready).toBe(true), 2 * SESSION_MS);
    const seen: bigint[] = [];
    for (let i = 0; i < 10; i++) seen.push(await (i % 2 === 0 ? a : b).ids.get('sequence', 'k'));
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
  }, 20_000);

  it('readiness goes down while the issuer does not answer this instance, and up once it does', async () => {
    const { store, zk, registry, a } = await firstInstance();
    const b = await boot('http://b', zk.newSession(), store, registry, []);
    await eventually(() => expect(b.sequence.readiness().ready).toBe(true), 2 * SESSION_MS);
    registry.delete('http://a'); // cut between the instances: a still issues for its callers
    await expect(b.ids.get('sequence', 'k')).rejects.toMatchObject({
      code: LeafErrorCode.SEQUENCE_NO_ISSUER,
    });
    expect(b.sequence.readiness()).toMatchObject({
      ready: false,
      reason: 'group 0: the issuer at http://a does not answer',
      unreachableIssuers: ['http://a'],
    });
    await expect(a.ids.get('sequence', 'k')).resolves.toBeGreaterThan(0n);
    expect(a.sequence.readiness().ready).toBe(true);
    registry.set('http://a', a.sequence); // healed: b's probe finds it without a call
    await eventually(() => expect(b.sequence.readiness().ready).toBe(true));
    await expect(b.ids.get('sequence', 'k')).resolves.toBeGreaterThan(0n);
  }, 15_000);

  it('an instance whose advertised address does not reach it never stands for election', async () => {
    const { store, zk, registry, a } = await firstInstance();
    registry.delete('http://a'); // nothing answers at a's address (a wrong LEAF_SEQUENCE_ADVERTISE)
    const b = await boot('http://b', zk.newSession(), store, registry, []);
    await eventually(() => expect(b.sequence.stats().groups[0]!.state).toBe('issuer'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(a.sequence.stats().groups[0]!.state).toBe('candidate');
    expect(a.sequence.readiness().advertiseChecked).toBe(false);
    // It still serves its own callers, by forwarding to the issuer.
    await expect(a.ids.get('sequence', 'k')).resolves.toBe(1n);
  }, 15_000);
});
