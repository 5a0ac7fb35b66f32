/**
 * The cost of the peer signature (`npm run bench:peers`; a module of `npm run bench`;
 * docs/security.md, "Peers"): forwarded batches sent through sequence mode's own transport
 * (`SequenceHttpTransport`, keep-alive `node:http`, `CALLERS` callers) to an issuer stand-in
 * on loopback that answers each item with a range, signed with the cluster secret and
 * verified (`PeerVerifier`: window, HMAC, replay memory; one secret, as outside a rotation,
 * during which the receiver computes one HMAC more) against the same unsigned, in the same run.
 *
 * Both ends run in this process, and the figure is this process's CPU time per request
 * (client and server), so other work on a shared machine does not count. The stand-in does
 * nothing but answer: the share of the signature here is larger than on the application,
 * whose route does more per request. The two sides run interleaved chunk by chunk
 * (alternating which goes first); the ratio is unsigned ÷ signed CPU per request (the signed
 * side's relative throughput), the median of the per-round ratios with its 95 % interval.
 * Goal (issue 34): ≥ 99 % for 1,000 items; one item to the stand-in is the upper bound of the
 * signature's share, without a goal (the goal for single IDs is on the application row).
 *
 * Then the same through the application: single IDs (`GET /api/sequence/get/{key}`, `CALLERS`
 * callers) on a forwarding instance whose issuer is another instance, two such pairs in this
 * process on one MariaDB database (`LEAF_TEST_MYSQL_URL`), one with `LEAF_CLUSTER_SECRET` and
 * one without, alternating rounds; the figure is this
 * process's CPU per request (callers, forwarder and issuer), the ratio as above. Goal ≥ 97 %.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SequenceHttpTransport } from '@app/leaf/adapters/http/sequence-forward.transport';
import { SequenceService } from 'nestjs-leaf';
import { NodeHttpTransport } from 'nestjs-leaf/client';
import { PeerSigner } from '@app/leaf/core/http/peer-signature';
import { PeerVerifier } from '@app/leaf/core/http/peer-verifier';
import { type ForwardItem } from '@app/leaf/core/sequence/forward-batcher';
import { createTestDatabase, type TestDatabase } from '../test/support/test-database';
import { startSelfAdvertisingApp } from '../test/support/app';
import { ratioCell } from './support/http-load';
import {
  fmt,
  median,
  medianInterval,
  plainRow,
  type BenchModule,
  type BenchRow,
} from './support/report';
import { runAlone } from './support/run';

const NEW = 'bench-cluster-secret-'.padEnd(48, 'n');
/** Concurrent senders (each waits for its answer before the next request). */
const CALLERS = 8;
const FULL = { rounds: 21 };
const QUICK = { rounds: 3 };

function cpuUs(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** An issuer stand-in: answers every item of the query with a range of its count. */
async function issuer(verifier: PeerVerifier | null): Promise<{ url: string; server: Server }> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (verifier !== null) {
      const verdict = verifier.verify({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
      });
      if (verdict !== 'ok') {
        response.statusCode = 401;
        response.end(`{"code":"LEAF_UNAUTHORIZED","verdict":"${verdict}"}`);
        return;
      }
    }
    const counts = /counts=([\d,]+)/.exec(request.url ?? '')![1]!.split(',');
    let next = 1;
    const ranges = counts.map((count) => {
      const start = next;
      next += Number(count);
      return { start: String(start), end: String(next) };
    });
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ ranges }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server };
}

/** `requests` batches of `items` through `transport`, `CALLERS` at a time; CPU µs used. */
async function chunk(
  transport: SequenceHttpTransport,
  url: string,
  items: readonly ForwardItem[],
  requests: number,
): Promise<number> {
  const started = cpuUs();
  let left = requests;
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (left-- > 0) {
        const ranges = await transport.send(url, items);
        if (ranges.length !== items.length) throw new Error('short answer');
      }
    }),
  );
  return cpuUs() - started;
}

/** One side of a comparison: `requests` requests, CPU µs used. */
type Side = (requests: number) => Promise<number>;

/** The row of one comparison: `rounds` interleaved rounds of `requests` requests a side. */
async function compare(
  label: string,
  requests: number,
  rounds: number,
  goal: number | null,
  sides: { signed: Side; plain: Side },
  log: (line: string) => void,
): Promise<BenchRow> {
  const run = (side: Side) => side(requests);
  await run(sides.plain); // warm-up, both
  await run(sides.signed);
  const ratios: number[] = [];
  const signedUs: number[] = [];
  const plainUs: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const first = round % 2 === 0 ? 'signed' : 'plain';
    const cpu = { signed: 0, plain: 0 };
    cpu[first] = await run(sides[first]);
    const second = first === 'signed' ? 'plain' : 'signed';
    cpu[second] = await run(sides[second]);
    signedUs.push(cpu.signed / requests);
    plainUs.push(cpu.plain / requests);
    ratios.push(cpu.plain / cpu.signed);
  }
  const signed = median(signedUs);
  const plain = median(plainUs);
  log(
    `peers: ${label}: signed ${fmt(signed, 1)} µs, unsigned ${fmt(plain, 1)} µs CPU per request ` +
      `(+${fmt(signed - plain, 1)} µs; ${rounds} rounds of ${requests} requests a side)`,
  );
  return {
    measurement: `${label}, signed and verified`,
    figure: `${fmt(signed, 1)} µs CPU/request`,
    baseline: `unsigned: ${fmt(plain, 1)} µs`,
    ratio: ratioCell(ratios),
    target: goal === null ? '—' : `≥ ${goal * 100} %`,
    met: goal === null ? null : median(ratios) >= goal,
  };
}

/**
 * Sign + verify alone, in a loop (no HTTP): CPU µs per request, median of `rounds` rounds of
 * `calls`, with its interval (the query of a one-item batch).
 */
function signAndVerify(rounds: number, calls: number, log: (line: string) => void): BenchRow {
  const path = '/api/sequence/internal/ranges';
  const query = 'keys=orders&counts=1';
  const url = `${path}?${query}`;
  const perRound: number[] = [];
  for (let round = 0; round <= rounds; round++) {
    const signer = new PeerSigner(NEW, Date.now);
    const verifier = new PeerVerifier([NEW], Date.now);
    const started = cpuUs();
    for (let i = 0; i < calls; i++) {
      const headers = signer.headers('GET', path, query);
      if (verifier.verify({ method: 'GET', url, headers }) !== 'ok') throw new Error('refused');
    }
    if (round > 0) perRound.push((cpuUs() - started) / calls); // round 0 warms up
  }
  const { median: us, low, high } = medianInterval(perRound);
  const interval = low !== null && high !== null ? ` (95 % CI ${fmt(low, 1)}–${fmt(high, 1)})` : '';
  log(`peers: sign + verify ${fmt(us, 1)} µs${interval}, ${rounds} rounds of ${calls}`);
  return plainRow(
    '`PeerSigner.headers` + `PeerVerifier.verify` in a loop, a one-item batch’s query (no HTTP)',
    `${fmt(us, 1)} µs CPU/request${interval}`,
  );
}

/** A forwarding instance and its issuer, on `db`, signing with `secret` (or none). */
async function appPair(
  db: TestDatabase,
  name: string,
  secret: string | null,
): Promise<{ forwarder: NestFastifyApplication; close(): Promise<void> }> {
  await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 100000)', [name]);
  const apps: NestFastifyApplication[] = [];
  const start = async () => {
    const app = await startSelfAdvertisingApp({
      HOST: '127.0.0.1',
      LEAF_DB_URL: db.url,
      LEAF_NAME: name,
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_SEQUENCE_HEARTBEAT_MS: '100',
      ...(secret !== null ? { LEAF_CLUSTER_SECRET: secret } : {}),
    });
    apps.push(app);
    return app;
  };
  const close = () => Promise.all(apps.map((app) => app.close())).then(() => undefined);
  try {
    const issuer = await start();
    const until = Date.now() + 20_000;
    while (issuer.get(SequenceService).stats().groups[0]?.state !== 'issuer') {
      if (Date.now() > until) throw new Error(`${name}: no issuer within 20 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const forwarder = await start();
    while (forwarder.get(SequenceService).stats().groups[0]?.issuer === null) {
      if (Date.now() > until) throw new Error(`${name}: the forwarder sees no issuer`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { forwarder, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Single IDs of `key` from `app` over keep-alive HTTP, `CALLERS` at a time. */
function singleIds(app: NestFastifyApplication, key: string, http: NodeHttpTransport): Side {
  const { port } = app.getHttpServer().address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/api/sequence/get/${key}`;
  return async (requests) => {
    const started = cpuUs();
    let left = requests;
    await Promise.all(
      Array.from({ length: CALLERS }, async () => {
        while (left-- > 0) {
          const answer = await http.get(url, 5000);
          if (answer.status !== 200) throw new Error(`${url}: HTTP ${answer.status}`);
        }
      }),
    );
    return cpuUs() - started;
  };
}

/** The application row: forwarded single IDs, signed against unsigned. */
async function applicationRow(
  rounds: number,
  requests: number,
  log: (line: string) => void,
): Promise<BenchRow> {
  const db = await createTestDatabase({ migrate: true });
  const pairs: Array<{ close(): Promise<void> }> = [];
  const http = new NodeHttpTransport({ maxSockets: CALLERS });
  try {
    const signed = await appPair(db, 'peers-signed', NEW);
    pairs.push(signed);
    const plain = await appPair(db, 'peers-plain', null);
    pairs.push(plain);
    const row = await compare(
      'forwarded single IDs through the application (forwarder and issuer)',
      requests,
      rounds,
      0.97,
      {
        signed: singleIds(signed.forwarder, 'peers-signed', http),
        plain: singleIds(plain.forwarder, 'peers-plain', http),
      },
      log,
    );
    const stats = signed.forwarder.get(SequenceService).stats();
    log(
      `peers: the forwarder sent ${fmt(stats.forwardBatches)} batches for ` +
        `${fmt(stats.forwardBatchCalls)} calls (mean ${fmt(stats.forwardBatchCalls / stats.forwardBatches, 2)} per batch)`,
    );
    return row;
  } finally {
    http.close();
    await Promise.all(pairs.map((pair) => pair.close()));
    await db.drop();
  }
}

export const bench: BenchModule = {
  name: 'peer-auth',
  title: 'Peer signature (sequence forwarding)',
  async run(context): Promise<BenchRow[]> {
    const { rounds } = context.quick ? QUICK : FULL;
    const inLoop = signAndVerify(rounds, context.quick ? 2000 : 20_000, context.log);
    if (context.skipHttp) return [inLoop];
    const verifier = new PeerVerifier([NEW], Date.now);
    const verifying = await issuer(verifier);
    const open = await issuer(null);
    const signer = new SequenceHttpTransport(5000, CALLERS, new PeerSigner(NEW, Date.now));
    const plain = new SequenceHttpTransport(5000, CALLERS);
    const sidesOf = (items: readonly ForwardItem[]) => ({
      signed: (requests: number) => chunk(signer, verifying.url, items, requests),
      plain: (requests: number) => chunk(plain, open.url, items, requests),
    });
    try {
      const one = [{ key: 'orders', count: 1 }];
      const thousand = Array.from({ length: 1000 }, (_, i) => ({ key: `key-${i}`, count: 1 }));
      const rows = [
        inLoop,
        await compare(
          'forwarded batch of 1 item to a bare issuer stand-in',
          context.quick ? 300 : 2000,
          rounds,
          null,
          sidesOf(one),
          context.log,
        ),
        await compare(
          'forwarded batch of 1,000 items to the stand-in',
          context.quick ? 20 : 200,
          rounds,
          0.99,
          sidesOf(thousand),
          context.log,
        ),
      ];
      context.log(`peers: ${fmt(verifier.remembered)} nonces remembered at the end`);
      rows.push(await applicationRow(rounds, context.quick ? 300 : 2000, context.log));
      return rows;
    } finally {
      signer.close();
      plain.close();
      await Promise.all(
        [verifying.server, open.server].map(
          (server) => new Promise((resolve) => server.close(resolve)),
        ),
      );
    }
  },
};

if (require.main === module) runAlone(bench);
