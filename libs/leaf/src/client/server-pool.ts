import type { Clock } from '../core/clock';

/** One server as the pool tracks it. */
export interface ServerState {
  readonly url: string;
  /** Failures in a row (0 after a success). */
  failures: number;
  /** Not asked before this time (ms since the epoch) unless every other server failed too. */
  downUntil: number;
}

/** Monitoring view of a server. */
export interface ServerSnapshot {
  readonly url: string;
  readonly failures: number;
  readonly up: boolean;
  readonly downUntil: number | null;
}

/**
 * The client's servers: round-robin over those that are up; a server that failed or timed
 * out is skipped for a back-off that doubles per failure in a row (`backoffMs` up to
 * `maxBackoffMs`) and asked again after it. The servers still backed off come last,
 * soonest-back first.
 */
export class ServerPool {
  private servers: ServerState[] = [];
  private cursor = 0;

  constructor(
    urls: readonly string[],
    private readonly backoff: { readonly backoffMs: number; readonly maxBackoffMs: number },
    private readonly clock: Clock,
  ) {
    this.replace(urls);
  }

  /** True when no server is known. */
  get empty(): boolean {
    return this.servers.length === 0;
  }

  /** Sets the list (service discovery); servers already known keep their back-off. */
  replace(urls: readonly string[]): void {
    const known = new Map(this.servers.map((s) => [s.url, s]));
    this.servers = [...new Set(urls)].map(
      (url) => known.get(url) ?? { url, failures: 0, downUntil: 0 },
    );
  }

  /** Every server once, in the order to try them for one request. */
  candidates(): ServerState[] {
    const now = this.clock.now();
    const n = this.servers.length;
    const start = n === 0 ? 0 : this.cursor++ % n;
    const rotated = [...this.servers.slice(start), ...this.servers.slice(0, start)];
    const up = rotated.filter((s) => s.downUntil <= now);
    const down = rotated.filter((s) => s.downUntil > now).sort((a, b) => a.downUntil - b.downUntil);
    return [...up, ...down];
  }

  /** The server answered. */
  succeeded(server: ServerState): void {
    server.failures = 0;
    server.downUntil = 0;
  }

  /** The server failed or timed out: back off. */
  failed(server: ServerState): void {
    server.failures++;
    const pause = Math.min(
      this.backoff.maxBackoffMs,
      this.backoff.backoffMs * 2 ** Math.min(30, server.failures - 1),
    );
    server.downUntil = this.clock.now() + pause;
  }

  /** Monitoring view. */
  snapshot(): ServerSnapshot[] {
    const now = this.clock.now();
    return this.servers.map((s) => ({
      url: s.url,
      failures: s.failures,
      up: s.downUntil <= now,
      downUntil: s.downUntil > now ? s.downUntil : null,
    }));
  }
}
