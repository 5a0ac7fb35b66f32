import type { Clock } from '../../core/clock';
import { LeafErrorCode } from '../../core/errors/leaf.error';
import type {
  IssuerCampaign,
  IssuerElection,
  IssuerGroup,
} from '../../core/sequence/issuer-election.port';
import { InMemoryAllocStore } from '../in-memory-alloc.store';
import { defineContract } from './contract-runner';

/** What {@link issuerElectionContract} needs of one adapter. */
export interface IssuerElectionHarness {
  /** A new handle on the shared election, as another instance holds it (opened by the case). */
  election(): IssuerElection;
  /** How long a won election holds without renewal (a session timeout, a row's lease). */
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly monotonic: () => number;
  /** Lets `ms` pass for the election: fake clocks advance, real time is waited for. */
  pass(ms: number): Promise<void>;
  /** Releases what `open` acquired (runs once, after the last case). */
  close(): Promise<void>;
}

let serial = 0;

/**
 * The behaviour every `IssuerElection` must have (docs/design.md, "Coordination ports"): of
 * the candidates of a group exactly one issues, and the others watch it (its address); a
 * resign hands the group to another candidate whose IDs come after the predecessor's;
 * namespaces never see each other's issuers.
 */
export const issuerElectionContract = defineContract<IssuerElectionHarness>(
  'IssuerElection',
  (harness, runner) => {
    const { it, expect, afterEach } = runner;
    let opened: IssuerElection[] = [];
    const alloc = new InMemoryAllocStore();

    afterEach(async () => {
      await Promise.all(opened.map((election) => election.close().catch(() => undefined)));
      opened = [];
    });

    /** Candidates `runs` of group 0 in a namespace of their own. */
    async function candidates(...runs: string[]): Promise<IssuerGroup[]> {
      const namespace = `contract${Date.now().toString(36)}${(serial++).toString(36)}`;
      alloc.setTag('k', 10);
      return Promise.all(
        runs.map(async (run) => {
          const election = harness().election();
          opened.push(election);
          await election.open(5000);
          const campaign: IssuerCampaign = {
            name: namespace,
            run,
            address: `http://${run}`,
            leaseMs: harness().leaseMs,
            leaseMarginMs: Math.floor(harness().leaseMs / 4),
            heartbeatIntervalMs: Math.floor(harness().leaseMs / 8),
            resignAfterFailingMs: harness().leaseMs,
            buffer: {
              preloadThreshold: 0.9,
              loadTimeoutMs: 1000,
              stepDurationMs: 900_000,
              maxStep: 1000,
              retryBackoffMs: 100,
            },
            loader: (tag, step) => alloc.allocate(tag, step),
            balance: { full: () => false, over: () => false },
            issuing: () => 0,
            eligible: () => true,
            clock: harness().clock,
            monotonic: harness().monotonic,
            listener: null,
          };
          return election.campaign(0, campaign);
        }),
      );
    }

    /** Rounds of every candidate until one issues (a lease at most, twice). */
    async function untilIssuing(groups: IssuerGroup[]): Promise<IssuerGroup> {
      for (let round = 0; round < 40; round++) {
        for (const group of groups) await group.tick();
        const issuing = groups.find((group) => group.issuing);
        if (issuing) return issuing;
        await harness().pass(Math.ceil(harness().leaseMs / 16));
      }
      throw new Error('no candidate issued within two leases');
    }

    it('exactly one candidate issues; the others watch it and refuse to issue', async () => {
      const groups = await candidates('a', 'b', 'c');
      const issuer = await untilIssuing(groups);
      for (const group of groups) await group.tick();
      const others = groups.filter((group) => group !== issuer);
      expect(groups.filter((group) => group.state === 'issuer')).toEqual([issuer]);
      expect(groups.every((group) => group.reachable)).toBe(true);
      const address = issuer.snapshot().issuer;
      for (const other of others) {
        expect(other.issuerAddress).toBe(address);
        await expect(other.issue('k', 1)).rejects.toMatchObject({
          code: LeafErrorCode.SEQUENCE_NO_ISSUER,
        });
      }
      const { start, end } = await issuer.issue('k', 3);
      expect(end - start).toBe(3n);
    });

    it('a resign hands the group over: the successor’s IDs come after the predecessor’s', async () => {
      const groups = await candidates('a', 'b');
      const first = await untilIssuing(groups);
      const last = (await first.issue('k', 5)).end;
      await first.resign();
      expect(first.state).toBe('stopped');
      await expect(first.issue('k', 1)).rejects.toMatchObject({
        code: LeafErrorCode.SEQUENCE_NO_ISSUER,
      });
      const successor = await untilIssuing(groups.filter((group) => group !== first));
      expect(successor.term).toBeGreaterThanOrEqual(1);
      expect((await successor.issue('k', 1)).start).toBeGreaterThanOrEqual(last);
    });

    it('namespaces are separate elections: each has its own issuer', async () => {
      const [one] = await candidates('a');
      const [two] = await candidates('b');
      await untilIssuing([one!]);
      await untilIssuing([two!]);
      expect(one!.state).toBe('issuer');
      expect(two!.state).toBe('issuer');
    });
  },
);
