import { InMemoryGaplessStore } from '../../testing/in-memory-gapless.store';
import { GaplessSeriesNotFoundError } from '../errors/gapless.error';
import { GaplessGroupCommit } from './gapless-group-commit';
import { checkNewGaplessSeries } from './gapless-series';
import { verifyGaplessSeries } from './gapless-verify';

async function settledSeries() {
  const store = new InMemoryGaplessStore(() => 1_800_000_000_000);
  await store.createSeries(checkNewGaplessSeries({ name: 'inv' }));
  const commit = new GaplessGroupCommit(store, 100);
  for (const key of ['a', 'b', 'c', 'd'])
    await commit.submit('inv', { kind: 'reserve', key, ttlMs: 60_000 });
  await commit.submit('inv', { kind: 'confirm', key: 'a', number: 1n });
  await commit.submit('inv', { kind: 'void', key: 'b', number: 2n, reason: 'typo' });
  await commit.submit('inv', { kind: 'confirm', key: 'c', number: 3n });
  return store;
}

describe('verifyGaplessSeries', () => {
  it('counts a sound series: issued, confirmed, voided, pending, the chain intact', async () => {
    expect(await verifyGaplessSeries(await settledSeries(), 'inv')).toEqual({
      series: 'inv',
      issued: 4,
      confirmed: 2,
      voided: 1,
      pending: 1,
      missing: [],
      duplicates: [],
      voidsWithoutReason: [],
      unrecorded: [],
      records: 3,
      ok: true,
    });
  });

  it('finds an edited record, a missing number, a void without reason, a state without record', async () => {
    const store = await settledSeries();
    store.tamper('inv', ({ records, numbers }) => {
      records[1] = { ...records[1]!, reason: 'edited' };
      numbers.delete(':4');
      numbers.set(':2', { ...numbers.get(':2')!, reason: null });
      numbers.set(':3', { ...numbers.get(':3')!, state: 'voided', reason: 'x' });
    });
    const report = await verifyGaplessSeries(store, 'inv');
    expect(report).toMatchObject({
      chainBrokenAt: '2',
      missing: [':4'],
      voidsWithoutReason: [':2'],
      unrecorded: [':3'],
      ok: false,
    });
  });

  it('finds a record out of sequence, and refuses an unknown series', async () => {
    const store = await settledSeries();
    store.tamper('inv', ({ records }) => records.splice(0, 1));
    expect((await verifyGaplessSeries(store, 'inv')).chainBrokenAt).toBe('2');
    await expect(verifyGaplessSeries(store, 'nope')).rejects.toBeInstanceOf(
      GaplessSeriesNotFoundError,
    );
  });
});
