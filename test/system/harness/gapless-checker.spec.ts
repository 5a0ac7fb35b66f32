import { checkGaplessAnswers, type GaplessRowSeen } from './gapless-checker';
import { CLIENT_VOID_REASON, type GaplessAnswer } from './gapless-clients';

const answer = (
  key: string,
  call: GaplessAnswer['call'],
  invokeMs: number,
  completeMs: number,
  outcome: Partial<GaplessAnswer> = {},
): GaplessAnswer => ({
  key,
  call,
  attempt: 1,
  process: 'p0',
  invokeMs,
  completeMs,
  status: 200,
  ...outcome,
});
const row = (key: string, number: string, state = 'confirmed', reason: string | null = null) =>
  ({ key, number, state, reason }) satisfies GaplessRowSeen;

describe('checkGaplessAnswers', () => {
  const clean = [
    answer('a', 'reserve', 0, 5, { number: '1', state: 'reserved' }),
    answer('a', 'reserve', 6, 8, { number: '1', state: 'reserved', process: 'p1', attempt: 1 }),
    answer('a', 'confirm', 9, 10, { number: '1', state: 'confirmed' }),
    answer('b', 'reserve', 11, 20, { status: null, error: 'TIMEOUT' }),
    answer('b', 'reserve', 21, 25, { number: '2', state: 'reserved', attempt: 2 }),
    answer('b', 'void', 26, 27, { number: '2', state: 'voided', reason: CLIENT_VOID_REASON }),
    answer('c', 'reserve', 28, 30, { number: '3', state: 'reserved' }),
    answer('c', 'reserve', 31, 32, { status: 503, error: 'LEAF_GAPLESS_BUSY' }),
  ];
  const rows = [
    row('a', '1'),
    row('b', '2', 'voided', CLIENT_VOID_REASON),
    row('c', '3', 'voided', 'expired'),
  ];
  const intents = new Map([
    ['a', 'confirm'],
    ['b', 'void'],
    ['c', 'abandon'],
  ]);

  it('passes a run where every answer of a key is its first number and rows agree', () => {
    expect(checkGaplessAnswers(clean, rows, intents)).toEqual({
      keys: 3,
      repeatAnswers: 3,
      wrongNumbers: [],
      sharedNumbers: [],
      notStored: [],
      wrongStates: [],
      outOfOrder: [],
      untyped: [],
    });
  });

  it('finds a retry answered with another number, and a number given to two keys', () => {
    const result = checkGaplessAnswers(
      [...clean, answer('a', 'reserve', 40, 41, { number: '3' })],
      rows,
      intents,
    );
    expect(result.wrongNumbers).toEqual(['a: 1 → 3']);
    expect(result.sharedNumbers).toEqual([]);
    const shared = checkGaplessAnswers(
      [...clean, answer('d', 'reserve', 40, 41, { number: '2' })],
      [...rows, row('d', '2')],
      intents,
    );
    expect(shared.sharedNumbers).toEqual(['2']);
  });

  it('finds rows that disagree with the answers or the intents, and a number out of order', () => {
    const result = checkGaplessAnswers(
      [...clean, answer('d', 'reserve', 31, 33, { number: '2' })],
      [row('a', '1', 'voided', 'expired'), row('b', '2'), row('c', '3', 'reserved')],
      intents,
    );
    expect(result.notStored).toEqual(['d']);
    expect(result.wrongStates).toEqual([
      'c: reserved, expected voided expired',
      'a: voided expired, expected confirmed',
      `b: confirmed, expected voided ${CLIENT_VOID_REASON}`,
    ]);
    expect(result.outOfOrder).toEqual(['d: 2 not above 3']);
  });

  it('counts an untyped refusal', () => {
    const untyped = answer('e', 'reserve', 50, 51, { status: 500, error: 'Internal' });
    expect(checkGaplessAnswers([...clean, untyped], rows, intents).untyped).toEqual([untyped]);
  });
});
