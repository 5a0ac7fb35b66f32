/**
 * Checks the answers {@link GaplessClients} recorded against the series' rows read after the
 * run (docs/gapless.md): every answer of a key carries the key's first number, no number went
 * to two keys, the rows hold what was answered, each key ended as its client left it, a key
 * asked for after another's answer got a larger number, and every refusal was typed.
 */
import type { GaplessAnswer } from './gapless-clients';

/** One row of `leaf_gapless_number`, as read after the run. */
export interface GaplessRowSeen {
  readonly key: string;
  readonly number: string;
  readonly state: string;
  readonly reason: string | null;
}

/** What {@link checkGaplessAnswers} found; every list empty is a pass. */
export interface GaplessCheck {
  /** Keys answered a number. */
  readonly keys: number;
  /** 200 answers to a key after its first (retries and later calls). */
  readonly repeatAnswers: number;
  /** Answers of a key with another number than its first (`key: first → other`). */
  readonly wrongNumbers: string[];
  /** Numbers answered to more than one key. */
  readonly sharedNumbers: string[];
  /** Keys whose row is missing or holds another number. */
  readonly notStored: string[];
  /** Keys whose row's state is not what their answers and their client's intent imply. */
  readonly wrongStates: string[];
  /** Keys whose number is not above one answered before the key was first asked for. */
  readonly outOfOrder: string[];
  /** Error answers other than a typed 409, 410 or 503. */
  readonly untyped: GaplessAnswer[];
}

const TYPED = /^(409|410|503) LEAF_[A-Z_]+$/;

/** See the file. `intents`: what each client decided for its key after the reservation. */
export function checkGaplessAnswers(
  answers: readonly GaplessAnswer[],
  rows: readonly GaplessRowSeen[],
  intents: ReadonlyMap<string, string>,
): GaplessCheck {
  const first = new Map<string, GaplessAnswer>();
  const wrongNumbers: string[] = [];
  let repeatAnswers = 0;
  for (const answer of [...answers].sort((a, b) => a.completeMs - b.completeMs)) {
    if (answer.status !== 200) continue;
    const known = first.get(answer.key);
    if (!known) {
      first.set(answer.key, answer);
      continue;
    }
    repeatAnswers++;
    if (answer.number !== known.number)
      wrongNumbers.push(`${answer.key}: ${known.number} → ${answer.number}`);
  }
  const owners = new Map<string, string>();
  const sharedNumbers: string[] = [];
  for (const [key, answer] of first) {
    const owner = owners.get(answer.number!);
    if (owner !== undefined && owner !== key) sharedNumbers.push(answer.number!);
    owners.set(answer.number!, key);
  }
  const byKey = new Map(rows.map((row) => [row.key, row]));
  const notStored = [...first]
    .filter(([key, answer]) => byKey.get(key)?.number !== answer.number)
    .map(([key]) => key);
  return {
    keys: first.size,
    repeatAnswers,
    wrongNumbers,
    sharedNumbers,
    notStored,
    wrongStates: wrongStates(answers, byKey, intents),
    outOfOrder: outOfOrder(answers, first),
    untyped: answers.filter(
      (a) => a.status !== null && a.status !== 200 && !TYPED.test(`${a.status} ${a.error}`),
    ),
  };
}

/** The state a settled key's row must have, from its answers and its client's intent. */
function wrongStates(
  answers: readonly GaplessAnswer[],
  byKey: ReadonlyMap<string, GaplessRowSeen>,
  intents: ReadonlyMap<string, string>,
): string[] {
  const expected = new Map<string, string>();
  for (const [key, intent] of intents)
    if (intent === 'abandon') expected.set(key, 'voided expired');
  for (const answer of answers) {
    if (answer.call === 'confirm' && answer.status === 200) expected.set(answer.key, 'confirmed');
    // A void answers the voided number with its reason: the client's, or `expired` when the
    // sweep came first.
    if (answer.call === 'void' && answer.status === 200)
      expected.set(answer.key, `voided ${answer.reason}`);
    if (answer.error === 'LEAF_GAPLESS_RESERVATION_EXPIRED')
      expected.set(answer.key, 'voided expired');
  }
  const wrong: string[] = [];
  for (const [key, state] of expected) {
    const row = byKey.get(key);
    const seen = row ? `${row.state}${row.state === 'voided' ? ` ${row.reason}` : ''}` : 'none';
    if (seen !== state) wrong.push(`${key}: ${seen}, expected ${state}`);
  }
  // A confirm never answered may have committed or not: confirmed, or voided by its TTL.
  for (const [key, intent] of intents) {
    const row = byKey.get(key);
    if (intent === 'confirm' && !expected.has(key) && row && row.state === 'reserved')
      wrong.push(`${key}: still reserved`);
  }
  return wrong;
}

/**
 * Keys asked for (first request sent) after another key's number was answered must hold a
 * larger number: the second's transaction took the lock after the first's committed.
 */
function outOfOrder(
  answers: readonly GaplessAnswer[],
  first: ReadonlyMap<string, GaplessAnswer>,
): string[] {
  const asked = new Map<string, number>();
  for (const answer of answers)
    if (answer.call === 'reserve')
      asked.set(answer.key, Math.min(asked.get(answer.key) ?? Infinity, answer.invokeMs));
  const answered = [...first.values()].sort((a, b) => a.completeMs - b.completeMs);
  const keys = [...first.keys()].sort((a, b) => asked.get(a)! - asked.get(b)!);
  const wrong: string[] = [];
  let highest = 0n;
  let i = 0;
  for (const key of keys) {
    while (i < answered.length && answered[i]!.completeMs < asked.get(key)!)
      highest = max(highest, BigInt(answered[i++]!.number!));
    if (BigInt(first.get(key)!.number!) <= highest)
      wrong.push(`${key}: ${first.get(key)!.number} not above ${highest}`);
  }
  return wrong;
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
