import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { NodeHttpTransport } from './node-http.transport';

/** A local HTTP server whose handler each test sets; it counts the connections it accepted. */
async function startServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; connections: () => number; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer(handler);
  server.on('connection', (socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => accepted,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('NodeHttpTransport', () => {
  it('reuses one keep-alive connection for sequential requests, and passes status, body and Retry-After', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/busy') {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' });
        res.end('{"code":"LEAF_SEGMENT_NOT_READY"}');
        return;
      }
      res.end(`answer to ${req.url}`);
    });
    const transport = new NodeHttpTransport({ maxSockets: 4 });
    try {
      for (let i = 0; i < 5; i++) {
        expect(await transport.get(`${server.url}/x?i=${i}`, 1000)).toEqual({
          status: 200,
          body: `answer to /x?i=${i}`,
        });
      }
      expect(await transport.get(`${server.url}/busy`, 1000)).toEqual({
        status: 503,
        body: '{"code":"LEAF_SEGMENT_NOT_READY"}',
        retryAfter: '2',
      });
      expect(server.connections()).toBe(1);
    } finally {
      transport.close();
      await server.stop();
    }
  });

  it('rejects a request past its deadline and does not reuse its connection', async () => {
    let answer = false;
    const server = await startServer((_req, res) => {
      if (answer) res.end('late but fine');
      // otherwise never answers
    });
    const transport = new NodeHttpTransport({ maxSockets: 1 });
    try {
      await expect(transport.get(`${server.url}/slow`, 50)).rejects.toThrow(/within 50 ms/);
      answer = true;
      expect((await transport.get(`${server.url}/again`, 1000)).body).toBe('late but fine');
      expect(server.connections()).toBe(2);
    } finally {
      transport.close();
      await server.stop();
    }
  });

  it('rejects a refused connection and an oversized answer', async () => {
    const server = await startServer((_req, res) => res.end('x'.repeat(2048)));
    const transport = new NodeHttpTransport({ maxSockets: 1, maxBodyBytes: 1024 });
    try {
      await expect(transport.get(`${server.url}/big`, 1000)).rejects.toThrow(/larger than 1024/);
      await server.stop();
      await expect(transport.get(`${server.url}/gone`, 1000)).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      transport.close();
    }
  });
});
