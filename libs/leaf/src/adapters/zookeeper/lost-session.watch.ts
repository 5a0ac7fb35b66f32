import { newNativeHandle } from './zookeeper.native';

/**
 * While disconnected, a throwaway session is opened every session timeout / 4 (within these
 * bounds); this many in a row connecting while the real session stays away mean the server
 * refuses it (it lost its data).
 */
const PROBE_MIN_MS = 1000;
const PROBE_MAX_MS = 3000;
const PROBES = 2;

/**
 * Tells a `ZookeeperClient` when its lost session is surely gone, so that it opens a new one
 * instead of letting the C client retry it forever (docs/design.md, "A ZooKeeper that forgot"):
 * - the connection has been lost for the session timeout: ZooKeeper expired the session by
 *   then, or no longer knows it;
 * - sooner, when the server answers throwaway sessions {@link PROBES} times in a row while the
 *   real one stays away: it refuses a client that has seen later transactions than its own (it
 *   lost its data, or was restored from an older snapshot).
 *
 * {@link start} at the connection loss, {@link stop} at a reconnection or a close; between
 * them `giveUp` is called at most once.
 */
export class LostSessionWatch {
  private timer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  /** Ends the throwaway session in flight, if any. */
  private endProbe: (() => void) | null = null;
  /** Bumped by every start and stop: late callbacks of an earlier watch do nothing. */
  private round = 0;

  constructor(
    private readonly server: { readonly connect: string; readonly sessionTimeoutMs: number },
    private readonly giveUp: (why: string) => void,
  ) {}

  /** The connection was lost; `timeoutMs` is the session's granted timeout. */
  start(timeoutMs: number): void {
    this.stop();
    const round = this.round;
    const current = (): boolean => round === this.round;
    const fire = (why: string): void => {
      if (!current()) return;
      this.stop();
      this.giveUp(why);
    };
    this.timer = setTimeout(
      () =>
        fire(
          `no connection for ${timeoutMs} ms, the session timeout: the session has expired, ` +
            'or the server no longer knows it (it lost its data)',
        ),
      timeoutMs,
    );
    this.timer.unref();
    const every = Math.max(PROBE_MIN_MS, Math.min(PROBE_MAX_MS, timeoutMs / 4));
    let answered = 0;
    const probe = (): void => {
      void this.answersNewSession(every).then((yes) => {
        if (!current()) return;
        answered = yes ? answered + 1 : 0;
        if (answered >= PROBES) {
          fire(
            `the server answers new sessions but not this one for ${PROBES} checks ${every} ms apart: ` +
              'it no longer knows it (it lost its data, or was restored from an older snapshot)',
          );
          return;
        }
        this.probeTimer = setTimeout(probe, every);
        this.probeTimer.unref();
      });
    };
    this.probeTimer = setTimeout(probe, every);
    this.probeTimer.unref();
  }

  /** The session is back, was given up, or the client closes: nothing more is called. */
  stop(): void {
    this.round++;
    clearTimeout(this.timer);
    clearTimeout(this.probeTimer);
    this.timer = undefined;
    this.probeTimer = undefined;
    this.endProbe?.();
  }

  /** True when a throwaway session connects within `timeoutMs` (it is closed at once). */
  private answersNewSession(timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const handle = newNativeHandle(this.server.connect, this.server.sessionTimeoutMs);
      let settled = false;
      const settle = (connected: boolean): void => {
        if (settled) return;
        settled = true;
        this.endProbe = null;
        clearTimeout(timer);
        try {
          handle.close();
        } catch {
          // closed already
        }
        resolve(connected);
      };
      const timer = setTimeout(() => settle(false), timeoutMs);
      this.endProbe = () => settle(false);
      handle.on('connect', () => settle(true));
      handle.on('close', () => settle(false));
      try {
        handle.init({});
      } catch {
        settle(false);
      }
    });
  }
}
