import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LeafTransport, TransportAnswer } from '../../core/http/leaf-transport.port';

/** Settings of {@link NodeHttpTransport}. */
export interface NodeHttpTransportOptions {
  /** Connections kept per server. */
  readonly maxSockets: number;
  /** Largest answer accepted, in bytes. @default 8 MiB */
  readonly maxBodyBytes?: number;
  /** Reuse connections (the benchmark turns it off to measure what it saves). @default true */
  readonly keepAlive?: boolean;
  /**
   * For `https:` servers: this side's certificate and key (mutual TLS), and the CA the
   * server's certificate must chain to (instead of the system's). @default none
   */
  readonly tls?: TransportTls;
}

/** PEM certificate, key and CA of a mutual-TLS client ({@link NodeHttpTransportOptions.tls}). */
export interface TransportTls {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  readonly ca: string | Buffer;
}

/**
 * The client's transport on `node:http`/`node:https` with keep-alive agents: one pool of at
 * most `maxSockets` connections per server, reused across requests (no dependency beyond
 * Node). A request past its deadline is destroyed, so its socket is not reused.
 */
export class NodeHttpTransport implements LeafTransport {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;
  private readonly maxBodyBytes: number;

  constructor(options: NodeHttpTransportOptions) {
    const agentOptions = {
      keepAlive: options.keepAlive ?? true,
      maxSockets: options.maxSockets,
      scheduling: 'lifo' as const,
    };
    this.http = new HttpAgent(agentOptions);
    this.https = new HttpsAgent({ ...agentOptions, ...options.tls });
    this.maxBodyBytes = options.maxBodyBytes ?? 8 * 1024 * 1024;
  }

  get(
    url: string,
    timeoutMs: number,
    headers?: Readonly<Record<string, string>>,
  ): Promise<TransportAnswer> {
    return this.send('GET', url, timeoutMs, headers);
  }

  post(
    url: string,
    body: string,
    timeoutMs: number,
    headers?: Readonly<Record<string, string>>,
  ): Promise<TransportAnswer> {
    return this.send('POST', url, timeoutMs, headers, body);
  }

  private send(
    method: 'GET' | 'POST',
    url: string,
    timeoutMs: number,
    headers?: Readonly<Record<string, string>>,
    body?: string,
  ): Promise<TransportAnswer> {
    return new Promise<TransportAnswer>((resolve, reject) => {
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      const request = (secure ? httpsRequest : httpRequest)(
        target,
        {
          method,
          agent: secure ? this.https : this.http,
          headers: {
            ...headers,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
        },
        (response: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > this.maxBodyBytes) {
              fail(new Error(`answer larger than ${this.maxBodyBytes} bytes`));
              request.destroy();
              return;
            }
            chunks.push(chunk);
          });
          response.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            const retryAfter = response.headers['retry-after'];
            resolve({
              status: response.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
            });
          });
          response.on('error', fail);
        },
      );
      // Settled once: a destroyed request may still report an error or an end afterwards.
      let settled = false;
      function fail(error: Error): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      }
      const timer = setTimeout(
        () => request.destroy(new Error(`no answer from ${target.origin} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      request.on('error', fail);
      request.end(body);
    });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
