/**
 * The UUIDv7 checker of the system tests (docs/reliability.md, "UUIDv7"): the answers of each
 * process in the order it served them, and for every UUID
 *
 * - RFC 9562's UUIDv7, checked here on its own rather than with the library's `isUuidV7`:
 *   canonical text (36 characters, lowercase hex in groups 8-4-4-4-12), version nibble 7,
 *   variant bits `0b10`;
 * - unique across every process;
 * - above the one the same process served before it. The text is compared as a string: in
 *   the canonical form (lowercase hex, dashes at fixed places) string order is the order of the
 *   128-bit value, i.e. byte order, which RFC 9562 makes time order;
 * - the worker ID in `rand_b` (the bits after the variant) is the instance's own;
 * - `unix_ts_ms` inside the request's window, widened by a clock offset a test gave the
 *   instance.
 */

/** One successful answer: the UUIDs of one request, as received. */
export interface UuidAnswer {
  /** Local time the request was sent (ms since the epoch). */
  readonly invokeMs: number;
  /** Local time the answer arrived. */
  readonly completeMs: number;
  readonly uuids: readonly string[];
}

/** What the checker needs to know about the instances. */
export interface UuidCheckOptions {
  /** Worker ID of each instance (by process name). */
  readonly workerIds: Readonly<Record<string, number>>;
  /**
   * Data-centre and worker bits of the snowflake layout, at the top of the 14 bits after the
   * variant. @default 10 (Leaf's layout: no data-centre bits, 10 worker bits)
   */
  readonly nodeBits?: number;
  /** Slack on both ends of a request window (both clocks are this host's). @default 25 */
  readonly skewMs?: number;
  /**
   * Per instance, the largest offset its wall clock may have had from the runner's, either
   * way (a clock a test stepped). @default 0 for every instance
   */
  readonly clockSlackMs?: Readonly<Record<string, number>>;
  /** At most this many examples per kind of violation are kept. @default 20 */
  readonly maxExamples?: number;
}

/** One violation, with enough context to read it in a failure message. */
export interface UuidViolation {
  readonly process: string;
  readonly uuid: string;
  readonly detail: string;
}

/** A kind of violation: how many, and the first few. */
export interface UuidViolations {
  readonly count: number;
  readonly examples: UuidViolation[];
}

/** The outcome; `valid` when every violation count is 0. */
export interface UuidCheckResult {
  readonly valid: boolean;
  /** UUIDs checked, all processes. */
  readonly uuids: number;
  /** Distinct UUIDs among them. */
  readonly distinct: number;
  /** Per instance: UUIDs, answers, and the first and last millisecond (`unix_ts_ms`). */
  readonly perProcess: Record<
    string,
    { uuids: number; answers: number; firstMs: number; lastMs: number }
  >;
  /** Not RFC 9562's UUIDv7 in canonical text. */
  readonly invalid: UuidViolations;
  /** Served more than once (each repeat counts). */
  readonly duplicates: UuidViolations;
  /** Not above the UUID the same process served before it. */
  readonly notIncreasing: UuidViolations;
  /** Carrying another worker ID than the instance's. */
  readonly wrongWorker: UuidViolations;
  /** `unix_ts_ms` outside the request's window. */
  readonly outsideWindow: UuidViolations;
}

class Violations implements UuidViolations {
  count = 0;
  readonly examples: UuidViolation[] = [];
  constructor(private readonly max: number) {}
  add(process: string, uuid: string, detail: string): void {
    this.count++;
    if (this.examples.length < this.max) this.examples.push({ process, uuid, detail });
  }
  get summary(): UuidViolations {
    return { count: this.count, examples: this.examples };
  }
}

/** Canonical text of any UUID: lowercase hex in groups 8-4-4-4-12 (RFC 9562 §4). */
const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Offsets of the dashes in the canonical text. */
const DASHES = [8, 13, 18, 23];

/** Whether the character code is `0-9` or `a-f`. */
const isLowerHex = (code: number): boolean =>
  (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x66);

/**
 * Why `text` is not an RFC 9562 UUIDv7 in canonical text, or `null` when it is: 36
 * characters, dashes after the 8th, 12th, 16th and 20th hex digit, every other character a
 * lowercase hex digit (RFC 9562 §4: output lowercase), the version nibble (the 13th digit) 7,
 * the two top bits of the 17th digit `0b10` (the variant of §4.1).
 */
export function uuidV7Problem(text: unknown): string | null {
  if (typeof text !== 'string') return `not a string: ${typeof text}`;
  if (!CANONICAL.test(text)) return shapeProblem(text);
  const version = parseInt(text[14]!, 16);
  if (version !== 7) return `version ${version}, not 7`;
  const variant = parseInt(text[19]!, 16) >>> 2;
  if (variant !== 0b10) return `variant bits ${variant.toString(2).padStart(2, '0')}, not 10`;
  return null;
}

/** Where a text that is not canonical goes wrong first. */
function shapeProblem(text: string): string {
  if (text.length !== 36) return `${text.length} characters, not 36`;
  for (let i = 0; i < 36; i++) {
    const code = text.charCodeAt(i);
    if (DASHES.includes(i)) {
      if (code !== 0x2d) return `no dash at ${i}`;
    } else if (!isLowerHex(code)) {
      return `not a lowercase hex digit at ${i}: ${JSON.stringify(text[i])}`;
    }
  }
  return 'not canonical';
}

/** `unix_ts_ms`: the first 48 bits. */
export function uuidV7Millisecond(uuid: string): number {
  return parseInt(uuid.slice(0, 8), 16) * 0x10000 + parseInt(uuid.slice(9, 13), 16);
}

/** The data-centre and worker bits: the `nodeBits` after the variant. */
export function uuidV7Node(uuid: string, nodeBits: number): number {
  return (parseInt(uuid.slice(19, 23), 16) & 0x3fff) >>> (14 - nodeBits);
}

/**
 * Checks the answers of each process, `answers[process]` in the order the process served them
 * (one request at a time per process, so request order is service order); see the file.
 */
export function checkUuidV7(
  answers: Readonly<Record<string, readonly UuidAnswer[]>>,
  options: UuidCheckOptions,
): UuidCheckResult {
  const nodeBits = options.nodeBits ?? 10;
  const skew = options.skewMs ?? 25;
  const max = options.maxExamples ?? 20;
  const invalid = new Violations(max);
  const duplicates = new Violations(max);
  const notIncreasing = new Violations(max);
  const wrongWorker = new Violations(max);
  const outsideWindow = new Violations(max);
  const perProcess: UuidCheckResult['perProcess'] = {};
  /** Every UUID seen, with the process that served it first. */
  const seen = new Map<string, string>();
  let uuids = 0;

  for (const [process, list] of Object.entries(answers)) {
    const workerId = options.workerIds[process];
    const slack = skew + (options.clockSlackMs?.[process] ?? 0);
    const stats = (perProcess[process] = { uuids: 0, answers: 0, firstMs: 0, lastMs: 0 });
    let previous = '';
    for (const answer of list) {
      stats.answers++;
      for (const uuid of answer.uuids) {
        uuids++;
        stats.uuids++;
        const problem = uuidV7Problem(uuid);
        if (problem !== null) {
          invalid.add(process, String(uuid), problem);
          continue;
        }
        const first = seen.get(uuid);
        if (first === undefined) seen.set(uuid, process);
        else duplicates.add(process, uuid, `also served by ${first}`);
        // Canonical lowercase text: string order is byte order (see the file).
        if (uuid <= previous) notIncreasing.add(process, uuid, `not above ${previous}`);
        previous = uuid;
        const node = uuidV7Node(uuid, nodeBits);
        if (node !== workerId) {
          wrongWorker.add(process, uuid, `worker ID ${node}, the instance holds ${workerId}`);
        }
        const ms = uuidV7Millisecond(uuid);
        if (ms < answer.invokeMs - slack || ms > answer.completeMs + slack) {
          outsideWindow.add(
            process,
            uuid,
            `unix_ts_ms ${ms} outside [${answer.invokeMs}, ${answer.completeMs}] ± ${slack} ms`,
          );
        }
        if (stats.firstMs === 0) stats.firstMs = ms;
        stats.lastMs = ms;
      }
    }
  }

  const all = [invalid, duplicates, notIncreasing, wrongWorker, outsideWindow];
  return {
    valid: all.every((violations) => violations.count === 0),
    uuids,
    distinct: seen.size,
    perProcess,
    invalid: invalid.summary,
    duplicates: duplicates.summary,
    notIncreasing: notIncreasing.summary,
    wrongWorker: wrongWorker.summary,
    outsideWindow: outsideWindow.summary,
  };
}
