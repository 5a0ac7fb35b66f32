import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';

/** One answer, body as text. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A minimal HTTP/1.1 client over real sockets, with its own keep-alive agent so a spec can
 * close every socket it opened (`close()`), leaving no handle behind.
 */
export class HttpClient {
  private readonly agent: Agent;

  /**
   * @param baseUrl `http://127.0.0.1:<port>`
   * @param maxSockets connections this client may open; 1 makes every request of this
   *   client travel on one connection, in order.
   */
  constructor(
    readonly baseUrl: string,
    maxSockets = 16,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  /** The base URL of an application listening on 127.0.0.1. */
  static baseUrlOf(app: NestFastifyApplication): string {
    const address = app.getHttpServer().address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  /**
   * `GET path` (or another method), resolved with status, headers and body text; with
   * `timeoutMs`, a request still unanswered then fails with the code `TIMEOUT`.
   */
  send(
    path: string,
    options: { method?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<HttpAnswer> {
    const { method = 'GET', headers = {}, timeoutMs } = options;
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.baseUrl}${path}`,
        { method, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', reject);
        },
      );
      if (timeoutMs !== undefined) {
        req.setTimeout(timeoutMs, () =>
          req.destroy(Object.assign(new Error('request timed out'), { code: 'TIMEOUT' })),
        );
      }
      req.on('error', reject);
      req.end();
    });
  }

  /** Closes every socket of this client. */
  close(): void {
    this.agent.destroy();
  }
}

/** Runs `tasks` with at most `limit` in flight; resolves with the results in input order. */
export async function runBounded<T>(
  count: number,
  limit: number,
  task: (index: number) => Promise<T>,
): Promise<T[]> {
  const results = new Array<T>(count);
  let nextIndex = 0;
  const worker = async (): Promise<void> => {
    while (nextIndex < count) {
      const index = nextIndex++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}
