import { SnowflakeLayout } from 'nestjs-leaf';
import { HttpClient } from './http-client';

/** Leaf's default epoch, which the application uses. */
const layout = new SnowflakeLayout(1288834974657);

/** One answer of a loaded process, in the order they completed. */
export interface LoadAnswer {
  /** Local time the answer completed. */
  readonly at: number;
  /** HTTP status, or 0 when the request failed (connection refused, reset). */
  readonly status: number;
  /** The error code of a non-200 JSON answer, or the socket error. */
  readonly code: string | null;
  /** IDs of a 200 answer. */
  readonly ids: readonly string[];
}

/**
 * Concurrent clients loading one application process with `GET /api/snowflake/ids/k`
 * (counts cycling 1..100), recording every answer, until {@link stop} or `maxMs`.
 * Bounded: at most `maxMs` of requests; each loop pauses `pauseMs` between requests (the
 * point is to cover every moment of a fault, not to saturate two cores) and 20 ms after a
 * failed one.
 */
export class IdLoad {
  readonly answers: LoadAnswer[] = [];
  /** Every ID of every 200 answer, in the order received. */
  readonly ids: string[] = [];
  private running = true;
  private readonly loops: Promise<void>[];
  private readonly client: HttpClient;

  constructor(
    port: number,
    concurrency = 2,
    private readonly maxMs = 120_000,
    private readonly pauseMs = 5,
  ) {
    this.client = new HttpClient(`http://127.0.0.1:${port}`, concurrency);
    const deadline = Date.now() + maxMs;
    this.loops = Array.from({ length: concurrency }, (_, i) => this.loop(i, deadline));
  }

  /** Answers as `status code` → count, e.g. `{ '200': 412, '503 LEAF_TIME_LEASE_UNAVAILABLE': 9 }`. */
  summary(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { status, code } of this.answers) {
      const key = status === 200 ? '200' : `${status} ${code ?? ''}`.trim();
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  }

  /** The decoded timestamps of the IDs issued, lowest and highest (`null` without IDs). */
  timestampRange(): { min: number; max: number } | null {
    let min = Infinity;
    let max = -Infinity;
    for (const id of this.ids) {
      const { timestamp } = layout.decode(BigInt(id));
      if (timestamp < min) min = timestamp;
      if (timestamp > max) max = timestamp;
    }
    return Number.isFinite(min) ? { min, max } : null;
  }

  /** When the last answer with IDs completed (`null`: none). */
  lastOkAt(): number | null {
    for (let i = this.answers.length - 1; i >= 0; i--) {
      if (this.answers[i]!.status === 200) return this.answers[i]!.at;
    }
    return null;
  }

  /** Stops the clients and waits for the requests in flight (a paused server must be resumed first). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.client.close();
  }

  private async loop(index: number, deadline: number): Promise<void> {
    let count = index + 1;
    while (this.running && Date.now() < deadline) {
      count = (count % 100) + 1;
      try {
        const answer = await this.client.send(`/api/snowflake/ids/k?count=${count}`);
        if (answer.status === 200) {
          const { ids } = JSON.parse(answer.body) as { ids: string[] };
          this.answers.push({ at: Date.now(), status: 200, code: null, ids });
          for (const id of ids) this.ids.push(id);
          await sleep(this.pauseMs);
        } else {
          let code: string | null = null;
          try {
            code = (JSON.parse(answer.body) as { code?: string }).code ?? null;
          } catch {
            code = 'unparsable body';
          }
          this.answers.push({ at: Date.now(), status: answer.status, code, ids: [] });
          await sleep(20);
        }
      } catch (error) {
        this.answers.push({
          at: Date.now(),
          status: 0,
          code: (error as NodeJS.ErrnoException).code ?? String(error),
          ids: [],
        });
        await sleep(20);
      }
    }
  }
}

/** IDs that occur more than once across `lists` (within one list or between lists). */
export function duplicatesAmong(...lists: readonly (readonly string[])[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const list of lists) {
    for (const id of list) {
      if (seen.has(id)) repeated.add(id);
      else seen.add(id);
    }
  }
  return [...repeated];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
