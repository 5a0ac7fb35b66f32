/**
 * A TCP proxy in front of ZooKeeper or MariaDB whose connections a test can cut: connection
 * loss and session expiry without touching the shared server. A `relay` other than the
 * plain pipe can read and drop traffic (test/system/harness/commit-ack-proxy.ts).
 */
import {
  connect as tcpConnect,
  createServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net';

/** A TCP proxy in front of ZooKeeper whose connections the test can cut. */
export class TcpProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private refusing = false;

  constructor(
    private target: { host: string; port: number },
    private readonly relay: (client: Socket, upstream: Socket) => void = (client, upstream) =>
      client.pipe(upstream).pipe(client),
  ) {
    this.server = createServer((client) => this.accept(client));
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  /** Cuts every open connection (new ones are accepted). */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  /**
   * Points the proxy at another server, as a virtual IP moved by a failover: open
   * connections are cut, new ones go to `target`.
   */
  retarget(target: { host: string; port: number }): void {
    this.target = target;
    this.dropConnections();
  }

  /** While `true`, cuts every connection and every new one at once. */
  refuse(refusing: boolean): void {
    this.refusing = refusing;
    if (refusing) this.dropConnections();
  }

  async stop(): Promise<void> {
    this.refuse(true);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.refusing) {
      client.destroy();
      return;
    }
    const upstream = tcpConnect(this.target.port, this.target.host);
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(socket);
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        this.sockets.delete(socket);
        other.destroy();
      });
    }
    this.relay(client, upstream);
  }
}
