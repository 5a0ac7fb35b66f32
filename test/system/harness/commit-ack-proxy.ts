/**
 * A MySQL-protocol-aware {@link TcpProxy} that loses COMMIT acknowledgements: when armed,
 * it forwards the next `COMMIT` to the server, lets the server commit, and then cuts the
 * connection instead of passing the answer back. The client cannot know whether its
 * allocation committed; the product must abandon the range (docs/design.md).
 *
 * Only the client-to-server direction is parsed (packet header: 3-byte length, 1-byte
 * sequence; `COM_QUERY` is 0x03), plus the server's greeting for the connection ID, which
 * the allocation audit records with each range.
 */
import type { Socket } from 'node:net';
import { TcpProxy } from '../../support/tcp-proxy';

const COM_QUERY = 0x03;

/** One acknowledgement lost. */
export interface LostCommit {
  /** The server's connection ID of the session whose COMMIT answer was lost. */
  readonly connectionId: number;
  readonly at: number;
}

/** See the file. */
export class CommitAckProxy {
  /** Every acknowledgement lost so far. */
  readonly lost: LostCommit[] = [];
  private readonly proxy: TcpProxy;
  private armed = 0;

  constructor(target: { host: string; port: number }) {
    this.proxy = new TcpProxy(target, (client, upstream) => this.relay(client, upstream));
  }

  get port(): number {
    return this.proxy.port;
  }

  start(): Promise<void> {
    return this.proxy.start();
  }

  stop(): Promise<void> {
    return this.proxy.stop();
  }

  /** Loses the acknowledgement of the next `count` COMMITs (any connection). */
  loseNextCommitAcks(count = 1): void {
    this.armed += count;
  }

  /** COMMITs still to lose. */
  get pending(): number {
    return this.armed;
  }

  private relay(client: Socket, upstream: Socket): void {
    let connectionId: number | null = null;
    let greeting = Buffer.alloc(0);
    let pending = Buffer.alloc(0);
    let committing = false;

    upstream.on('data', (chunk: Buffer) => {
      if (committing) {
        // The server answered the COMMIT: it committed (or failed) and nobody will know.
        this.lost.push({ connectionId: connectionId ?? -1, at: Date.now() });
        client.destroy();
        upstream.destroy();
        return;
      }
      if (connectionId === null) {
        greeting = Buffer.concat([greeting, chunk]);
        connectionId = greetingConnectionId(greeting);
      }
      client.write(chunk);
    });

    client.on('data', (chunk: Buffer) => {
      if (committing) return;
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const length = pending.readUIntLE(0, 3);
        if (pending.length < 4 + length) break;
        const packet = pending.subarray(0, 4 + length);
        pending = pending.subarray(4 + length);
        upstream.write(packet);
        if (this.armed > 0 && isCommit(packet)) {
          this.armed--;
          committing = true;
          return;
        }
      }
    });
  }
}

/** True for a `COM_QUERY` whose text is `COMMIT`. */
function isCommit(packet: Buffer): boolean {
  return (
    packet.length > 5 &&
    packet[4] === COM_QUERY &&
    packet.subarray(5).toString('utf8').trim().toUpperCase() === 'COMMIT'
  );
}

/**
 * The connection ID of a protocol-10 greeting (header, protocol byte, NUL-terminated
 * server version, 4-byte ID), or `null` until the buffer holds it.
 */
function greetingConnectionId(buffer: Buffer): number | null {
  const end = buffer.indexOf(0, 5);
  if (end < 0 || buffer.length < end + 5) return null;
  return buffer.readUInt32LE(end + 1);
}
