/**
 * Clients of a gapless series over HTTP (docs/gapless.md, "Routes, CLI and operations"): each
 * loop takes a new idempotency key, reserves under it, sometimes reserves again at once, then
 * confirms, voids or abandons the number. A request that times out, fails to connect or is
 * refused with a 5xx is sent again under the same key to another instance. Every answer is
 * recorded ({@link GaplessAnswer}) for the checker (`gapless-checker.ts`).
 */
import { sleep } from '../../support/id-load';
import type { LoadTarget } from './load';

/** What a client asked. */
export type GaplessCall = 'reserve' | 'confirm' | 'void';

/** One request and its outcome. */
export interface GaplessAnswer {
  readonly key: string;
  readonly call: GaplessCall;
  /** 1 for the first request of this call of the key, 2... for its retries. */
  readonly attempt: number;
  /** The instance asked (`p0`...). */
  readonly process: string;
  readonly invokeMs: number;
  readonly completeMs: number;
  /** The HTTP status, or `null` when no answer came (timeout, refused, reset). */
  readonly status: number | null;
  /** The number of a 200 (decimal string). */
  readonly number?: string;
  /** The state of a 200. */
  readonly state?: string;
  /** The void reason of a 200 (`null` unless voided). */
  readonly reason?: string | null;
  /** The `LEAF_…` code of an error answer, or the network failure (`TIMEOUT`, `NOT_LISTENING`...). */
  readonly error?: string;
}

/** Settings of {@link GaplessClients}. */
export interface GaplessClientOptions {
  readonly targets: readonly LoadTarget[];
  readonly series: string;
  /** Client loops. */
  readonly concurrency: number;
  /** TTL of each reservation, ms. */
  readonly ttlMs: number;
  /** A request unanswered after this long is given up and sent elsewhere, ms. @default 2500 */
  readonly timeoutMs?: number;
  /** Requests per call before a client gives the key up. @default 12 */
  readonly maxAttempts?: number;
  /** Bearer token of the client routes, if any. */
  readonly token?: string;
}

/** The reason a client voids with. */
export const CLIENT_VOID_REASON = 'customer cancelled';

/** See the file. */
export class GaplessClients {
  /** Every answer, in completion order. */
  readonly answers: GaplessAnswer[] = [];
  /** What each client decided for its key (`abandon` as soon as it decides). */
  readonly intents = new Map<string, 'confirm' | 'void' | 'abandon'>();
  private running = true;
  private readonly loops: Promise<void>[];
  private sequence = 0;

  constructor(private readonly options: GaplessClientOptions) {
    this.loops = Array.from({ length: options.concurrency }, (_, i) => this.loop(i));
  }

  /** Stops the loops after their current key and waits for them. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async loop(client: number): Promise<void> {
    while (this.running) {
      const key = `c${client}-${this.sequence++}`;
      const reserved = await this.call(key, 'reserve', () => ({ key, ttlMs: this.options.ttlMs }));
      if (reserved?.number === undefined) continue;
      const number = reserved.number;
      // An immediate retry of the same key on another instance (a client that lost the answer).
      if (Math.random() < 0.2) await this.call(key, 'reserve', () => ({ key }), reserved.process);
      const roll = Math.random();
      if (roll < 0.55) {
        this.intents.set(key, 'confirm');
        const confirmed = await this.call(key, 'confirm', () => ({ number, key }));
        if (confirmed && Math.random() < 0.1)
          await this.call(key, 'reserve', () => ({ key }), confirmed.process);
      } else if (roll < 0.8) {
        this.intents.set(key, 'void');
        await this.call(key, 'void', () => ({ number, key, reason: CLIENT_VOID_REASON }));
      } else {
        this.intents.set(key, 'abandon');
      }
    }
  }

  /**
   * `call` of `key`, retried on another instance after a timeout, a refused connection or a
   * 5xx, until an answer other than those; the 200's answer, else `null`.
   */
  private async call(
    key: string,
    call: GaplessCall,
    body: () => Record<string, unknown>,
    avoid?: string,
  ): Promise<GaplessAnswer | null> {
    const maxAttempts = this.options.maxAttempts ?? 12;
    let last = avoid;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const targets = this.options.targets.filter((t) => t.name !== last);
      const target = targets[Math.floor(Math.random() * targets.length)]!;
      const answer = await this.send(target, key, call, attempt, body());
      this.answers.push(answer);
      last = target.name;
      if (answer.status !== null && answer.status < 500)
        return answer.status === 200 ? answer : null;
      await sleep(50 + Math.random() * 100);
    }
    return null;
  }

  private async send(
    target: LoadTarget,
    key: string,
    call: GaplessCall,
    attempt: number,
    body: Record<string, unknown>,
  ): Promise<GaplessAnswer> {
    const base = { key, call, attempt, process: target.name, invokeMs: Date.now() };
    const url = target.baseUrl();
    if (url === null)
      return { ...base, completeMs: Date.now(), status: null, error: 'NOT_LISTENING' };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    try {
      const response = await fetch(`${url}/api/gapless/${this.options.series}/${call}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 2500),
      });
      const text = await response.text();
      const completeMs = Date.now();
      const json = parseJson(text);
      if (response.status === 200)
        return {
          ...base,
          completeMs,
          status: 200,
          number: String(json.number),
          state: String(json.state),
          reason: (json.reason as string | null) ?? null,
        };
      return { ...base, completeMs, status: response.status, error: String(json.code ?? text) };
    } catch (error) {
      return { ...base, completeMs: Date.now(), status: null, error: networkError(error) };
    }
  }
}

function parseJson(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** `TIMEOUT`, `ECONNREFUSED`, `ECONNRESET`... of a failed fetch. */
function networkError(error: unknown): string {
  const e = error as { name?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'TIMEOUT';
  return e.cause?.code ?? e.name ?? 'NETWORK';
}
