/**
 * One HTTP/1.1 request written byte for byte on its own socket, for inputs a regular client
 * refuses to send (raw non-ASCII in the path, a NUL, oversized headers, odd methods).
 */
import { connect } from 'node:net';

/** The answer to a raw request; `status` 0 when the server closed without answering. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** A socket error, if any (after or instead of an answer). */
  readonly error?: string;
}

/**
 * Sends `method target HTTP/1.1` with `headers` (plus `Host` and `Connection: close`) to
 * 127.0.0.1:`port` and reads the answer until the server closes, at most `timeoutMs`.
 * `target` goes on the wire as given (a Buffer for arbitrary bytes).
 */
export function rawRequest(
  port: number,
  method: string,
  target: string | Buffer,
  headers: Record<string, string> = {},
  timeoutMs = 5_000,
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | undefined;
    const lines = Object.entries({ Host: '127.0.0.1', Connection: 'close', ...headers })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.setTimeout(timeoutMs, () => {
      error = 'TIMEOUT';
      socket.destroy();
    });
    socket.on('connect', () => {
      socket.write(Buffer.concat([Buffer.from(`${method} `), Buffer.from(target)]));
      socket.write(` HTTP/1.1\r\n${lines}\r\n`);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (cause: NodeJS.ErrnoException) => (error ??= cause.code ?? String(cause)));
    socket.on('close', () => resolve({ ...parse(Buffer.concat(chunks)), error }));
  });
}

function parse(raw: Buffer): Omit<RawAnswer, 'error'> {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) return { status: 0, headers: {}, body: raw.toString('utf8') };
  const [statusLine, ...headerLines] = raw.subarray(0, split).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.subarray(split + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  return { status, headers, body: body.toString('utf8') };
}

/** The payload of a chunked body (sizes in hex bytes, each chunk followed by CRLF). */
function unchunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let rest = body;
  for (let guard = 0; guard < 10_000; guard++) {
    const lineEnd = rest.indexOf('\r\n');
    if (lineEnd < 0) break;
    const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
    rest = rest.subarray(lineEnd + 2 + size + 2);
  }
  return Buffer.concat(parts);
}
