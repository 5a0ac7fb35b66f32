import type {
  RegionClaim,
  RegionClaimResult,
  RegionLeaseRow,
  RegionRegistry,
} from '../../core/snowflake/region-registry.port';
import { defineContract } from './contract-runner';
import type { LeaseTableHarness } from './lease-table.harness';

/** What {@link regionRegistryContract} needs of one implementation. */
export interface RegionRegistryHarness extends LeaseTableHarness<RegionLeaseRow> {
  readonly registry: RegionRegistry;
}

/**
 * The contract of a {@link RegionRegistry} (docs/design.md, "Regions"): a new data-centre ID
 * at epoch 1; the holder region's instances join its lease; another region is refused while
 * the lease lives (holder and expiry named) and takes it once expired, with epoch + 1 and the
 * old horizon as floor; renewals fenced by region and epoch, expiry and horizon only grow;
 * concurrent claims of two regions: one wins; epochs stay exact.
 */
export const regionRegistryContract = defineContract<RegionRegistryHarness>(
  'RegionRegistry',
  (harness, runner) => {
    const { it, expect } = runner;
    const ask = (
      name: string,
      region: string,
      leaseMs = 60_000,
      horizon = 1_000,
      dataCenterId = 3,
    ): Promise<RegionClaimResult> =>
      harness().registry.claim({ name, dataCenterId, region, leaseMs, horizon });
    const claim = async (...args: Parameters<typeof ask>): Promise<RegionClaim> => {
      const result = await ask(...args);
      if (!('claimed' in result)) throw new Error(`held by ${result.held.region}`);
      return result.claimed;
    };

    it('claims a new data-centre ID at epoch 1 with no floor; the region’s other instances join it', async () => {
      const first = await claim('new', 'eu', 60_000, 5_000);
      expect(first).toMatchObject({
        dataCenterId: 3,
        region: 'eu',
        epoch: 1n,
        floor: 0,
        how: 'new',
      });
      const second = await claim('new', 'eu', 60_000, 4_000);
      expect(second).toMatchObject({ epoch: 1n, floor: 0, how: 'joined' });
      const row = await harness().registry.holder('new', 3);
      expect(row).toMatchObject({ region: 'eu', epoch: 1n, horizon: 5_000, floor: 0 });
      expect(row!.expiresAt).toBeGreaterThan(1_600_000_000_000);
      expect(await harness().registry.holder('new', 4)).toBeNull();
      expect(await harness().registry.holder('other', 3)).toBeNull();
    });

    it('refuses another region while the lease lives, naming holder and expiry, and changes nothing', async () => {
      await claim('held', 'eu', 5_000, 7_000);
      const before = await harness().registry.holder('held', 3);
      const refused = await ask('held', 'us', 60_000, 9_000);
      expect(refused).toEqual({ held: before });
      expect(await harness().registry.holder('held', 3)).toEqual(before);
      // Another data-centre ID is free for the other region.
      expect((await claim('held', 'us', 5_000, 9_000, 4)).how).toBe('new');
    });

    it('another region takes an expired lease with epoch + 1 and floor = the old horizon; the old region can no longer renew', async () => {
      const eu = await claim('take', 'eu', 300, 1_700_000_000_123);
      await harness().elapse(450);
      const us = await claim('take', 'us', 60_000, 1_000);
      expect(us).toMatchObject({
        region: 'us',
        epoch: eu.epoch + 1n,
        floor: 1_700_000_000_123,
        how: 'taken',
      });
      expect(await harness().registry.renew(eu, 60_000, 1_800_000_000_000)).toBe(false);
      expect(await harness().registry.holder('take', 3)).toMatchObject({
        region: 'us',
        epoch: us.epoch,
        horizon: 1_700_000_000_123,
        floor: 1_700_000_000_123,
      });
      // The old region, back, is refused: the lease is the new region's now.
      expect('held' in (await ask('take', 'eu'))).toBe(true);
    });

    it('renewals keep the lease live and only raise expiry and horizon', async () => {
      const eu = await claim('renew', 'eu', 400, 5_000);
      expect(await harness().registry.renew(eu, 400, 4_000)).toBe(true);
      for (let i = 0; i < 4; i++) {
        await harness().elapse(200);
        expect(await harness().registry.renew(eu, 400, 6_000 + i)).toBe(true);
      }
      // A shorter renewal never cuts a longer one short.
      const long = await harness().registry.renew(eu, 60_000, 0);
      expect(long).toBe(true);
      expect(await harness().registry.renew(eu, 1, 0)).toBe(true);
      await harness().elapse(300);
      expect('held' in (await ask('renew', 'us'))).toBe(true);
      expect((await harness().registry.holder('renew', 3))!.horizon).toBe(6_003);
    });

    it('two regions claiming one free data-centre ID at once: exactly one wins', async () => {
      const results = await Promise.all(
        ['eu', 'us', 'ap', 'sa'].map((region) => ask('race', region)),
      );
      const won = results.filter((r) => 'claimed' in r);
      expect(won).toHaveLength(1);
      const winner = (won[0] as { claimed: RegionClaim }).claimed.region;
      for (const r of results) if ('held' in r) expect(r.held.region).toBe(winner);
    });

    it('keeps epochs exact beyond 2^53', async () => {
      await harness().insertRow('big', {
        dataCenterId: 3,
        region: 'x',
        epoch: 9_007_199_254_740_993n,
        expiresAt: 0,
        horizon: 0,
        floor: 0,
      });
      const taken = await claim('big', 'eu');
      expect(taken.epoch).toBe(9_007_199_254_740_994n);
      expect(await harness().registry.renew(taken, 60_000, 1)).toBe(true);
      expect(
        await harness().registry.renew({ ...taken, epoch: 9_007_199_254_740_993n }, 60_000, 1),
      ).toBe(false);
    });
  },
);
