/**
 * A bounded concurrent HTTP driver: `concurrency` client loops send requests to a set of
 * application processes over keep-alive connections until a duration, an operation count
 * or `stop()`, and record every operation in a {@link History}.
 */
import { Agent, request } from 'node:http';
import { sleep } from '../../support/id-load';
import type { History, Operation } from './history';

/** Where requests go: one application process, whose address may change across restarts. */
export interface LoadTarget {
  /** Its stable name (`p0`...). */
  readonly name: string;
  /** `http://127.0.0.1:<port>` now, or `null` while the process is not listening. */
  baseUrl(): string | null;
}

/** One kind of request. */
export interface LoadRoute {
  /** Recorded as {@link Operation.route}, e.g. `segment/get`. */
  readonly name: string;
  /** The tag or key, recorded as {@link Operation.key}. */
  readonly key: string;
  /** Path and query. */
  readonly path: string;
  /** The IDs of a 200 answer's body (decimal strings through `BigInt`, never `Number`). */
  parse(body: string): bigint[];
}

const parsePlain = (body: string): bigint[] => [parseId(body)];
const parseList = (body: string): bigint[] =>
  (JSON.parse(body) as { ids: string[] }).ids.map(parseId);

/** A decimal ID; anything else (a negative number, a float, text) throws. */
function parseId(text: string): bigint {
  if (!/^\d{1,19}$/.test(text)) throw new Error(`not an ID: ${JSON.stringify(text)}`);
  return BigInt(text);
}

/** `/api/segment/get|ids|range/<tag>`; `count` for `ids` and `range`. */
export function segmentRoute(kind: 'get' | 'ids' | 'range', tag: string, count = 10): LoadRoute {
  const key = encodeURIComponent(tag);
  if (kind === 'get') {
    return { name: 'segment/get', key: tag, path: `/api/segment/get/${key}`, parse: parsePlain };
  }
  if (kind === 'ids') {
    return {
      name: 'segment/ids',
      key: tag,
      path: `/api/segment/ids/${key}?count=${count}`,
      parse: parseList,
    };
  }
  return {
    name: 'segment/range',
    key: tag,
    path: `/api/segment/range/${key}?count=${count}`,
    parse: (body) => {
      const range = JSON.parse(body) as { start: string; end: string };
      const start = parseId(range.start);
      const end = parseId(range.end);
      if (end - start !== BigInt(count)) throw new Error(`range of ${end - start}, not ${count}`);
      return Array.from({ length: count }, (_, i) => start + BigInt(i));
    },
  };
}

/** `/api/<mode>/get|ids/<key>`; `count` for `ids`. */
function keyRoute(
  mode: 'snowflake' | 'sequence',
  kind: 'get' | 'ids',
  key: string,
  count: number,
): LoadRoute {
  const path = encodeURIComponent(key);
  return kind === 'get'
    ? { name: `${mode}/get`, key, path: `/api/${mode}/get/${path}`, parse: parsePlain }
    : {
        name: `${mode}/ids`,
        key,
        path: `/api/${mode}/ids/${path}?count=${count}`,
        parse: parseList,
      };
}

/** `/api/snowflake/get|ids/<key>`; `count` for `ids`. */
export function snowflakeRoute(kind: 'get' | 'ids', key = 'k', count = 10): LoadRoute {
  return keyRoute('snowflake', kind, key, count);
}

/** `/api/sequence/get|ids/<key>`; `count` for `ids`. */
export function sequenceRoute(kind: 'get' | 'ids', key: string, count = 10): LoadRoute {
  return keyRoute('sequence', kind, key, count);
}

/** Settings of one {@link Load}. */
export interface LoadOptions {
  readonly targets: readonly LoadTarget[];
  readonly routes: readonly LoadRoute[];
  readonly history: History;
  /** Client loops (each with at most one request in flight). @default 8 */
  readonly concurrency?: number;
  /** Stop sending after this long. @default 10_000 */
  readonly durationMs?: number;
  /** Stop sending after this many operations in all. @default 1_000_000 */
  readonly maxOps?: number;
  /** A request without an answer after this long is abandoned as `info`. @default 5_000 */
  readonly timeoutMs?: number;
  /** Pause of a loop after each successful request. @default 0 */
  readonly pauseMs?: number;
  /** Pause of a loop after a failed or unknown one (no hot loop on a dead process). @default 20 */
  readonly failurePauseMs?: number;
}

/** Counts of one run, for the test's log. */
export interface LoadSummary {
  readonly ops: number;
  readonly ok: number;
  readonly fail: number;
  readonly info: number;
  readonly durationMs: number;
}

/**
 * A running load; see the file. Loop `i` sends to target `i mod targets` (so every target
 * gets its share whatever the others do) and cycles through the routes.
 */
export class Load {
  /** Resolves when every loop has ended (duration, count or {@link stop}). */
  readonly finished: Promise<LoadSummary>;
  private running = true;
  private ops = 0;
  private readonly counts = { ok: 0, fail: 0, info: 0 };
  private readonly agents = new Map<string, Agent>();
  private readonly settings: Required<LoadOptions>;
  private readonly routes: LoadRoute[];

  constructor(options: LoadOptions) {
    this.settings = {
      concurrency: 8,
      durationMs: 10_000,
      maxOps: 1_000_000,
      timeoutMs: 5_000,
      pauseMs: 0,
      failurePauseMs: 20,
      ...options,
    };
    if (this.settings.targets.length === 0 || this.settings.routes.length === 0) {
      throw new Error('a load needs at least one target and one route');
    }
    this.routes = [...this.settings.routes];
    const started = Date.now();
    const deadline = started + this.settings.durationMs;
    const loops = Array.from({ length: this.settings.concurrency }, (_, i) =>
      this.loop(i, deadline),
    );
    this.finished = Promise.all(loops).then(() => {
      for (const agent of this.agents.values()) agent.destroy();
      return { ops: this.ops, ...this.counts, durationMs: Date.now() - started };
    });
  }

  /** Starts a load; see {@link LoadOptions}. */
  static start(options: LoadOptions): Load {
    return new Load(options);
  }

  /** Operations recorded so far. */
  get recorded(): number {
    return this.ops;
  }

  /** Successful operations so far. */
  get okCount(): number {
    return this.counts.ok;
  }

  /** Adds `route` to the cycle of every loop from its next request on (a fault's new tag). */
  addRoute(route: LoadRoute): void {
    this.routes.push(route);
  }

  /** Stops sending and waits for the requests in flight (each ends within `timeoutMs`). */
  stop(): Promise<LoadSummary> {
    this.running = false;
    return this.finished;
  }

  private async loop(index: number, deadline: number): Promise<void> {
    const { targets, maxOps, pauseMs, failurePauseMs } = this.settings;
    const routes = this.routes;
    const target = targets[index % targets.length]!;
    let turn = Math.floor(index / targets.length);
    while (this.running && Date.now() < deadline && this.ops < maxOps) {
      const route = routes[turn++ % routes.length]!;
      this.ops++;
      const operation = await this.send(target, route);
      this.counts[operation.type]++;
      this.settings.history.append(operation);
      const pause = operation.type === 'ok' ? pauseMs : failurePauseMs;
      if (pause > 0) await sleep(pause);
    }
  }

  private async send(target: LoadTarget, route: LoadRoute): Promise<Operation> {
    const invokeMs = Date.now();
    const base = { process: target.name, route: route.name, key: route.key, invokeMs };
    const baseUrl = target.baseUrl();
    if (baseUrl === null) {
      return { ...base, completeMs: invokeMs, type: 'fail', ids: [], error: 'NOT_LISTENING' };
    }
    try {
      const { status, body } = await this.get(baseUrl, route.path);
      const completeMs = Date.now();
      if (status === 200) {
        try {
          return { ...base, completeMs, type: 'ok', ids: route.parse(body), status };
        } catch (error) {
          // A 200 the client cannot read: whatever it carried is lost to the history.
          return { ...base, completeMs, type: 'info', ids: [], status, error: String(error) };
        }
      }
      return { ...base, completeMs, type: 'fail', ids: [], status, error: errorCode(status, body) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      // Refused: nothing reached the process. Anything else may have been served and lost.
      const type = code === 'ECONNREFUSED' ? 'fail' : 'info';
      return { ...base, completeMs: Date.now(), type, ids: [], error: code };
    }
  }

  private agent(baseUrl: string): Agent {
    let agent = this.agents.get(baseUrl);
    if (!agent) {
      agent = new Agent({ keepAlive: true, maxSockets: this.settings.concurrency });
      this.agents.set(baseUrl, agent);
    }
    return agent;
  }

  private get(baseUrl: string, path: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(`${baseUrl}${path}`, { agent: this.agent(baseUrl) }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      });
      const timer = setTimeout(
        () => req.destroy(Object.assign(new Error('request timed out'), { code: 'TIMEOUT' })),
        this.settings.timeoutMs,
      );
      req.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      req.end();
    });
  }
}

/** The `LEAF_...` code of an error answer, or `HTTP_<status>` when the body is not the contract's. */
export function errorCode(status: number, body: string): string {
  try {
    const code = (JSON.parse(body) as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  } catch {
    // not JSON: reported below
  }
  return `HTTP_${status}`;
}
