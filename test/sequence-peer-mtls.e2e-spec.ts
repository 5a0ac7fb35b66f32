/**
 * The internal routes on a mutual-TLS listener of their own (docs/security.md, "Peers"), on
 * PostgreSQL: two instances with `NODE_ENV=production`, `LEAF_INTERNAL_PORT` and certificates
 * of one test CA (made with `openssl` for the run), no cluster secret. Forwarding goes over
 * HTTPS with the client certificate; the listener completes no connection without a
 * certificate of that CA and serves nothing but the internal routes; the public port answers
 * them 404.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SequenceService } from 'nestjs-leaf';
import { eventually } from '@app/leaf/testing/eventually';
import { createApp } from '../src/bootstrap';
import { loadAppConfig } from '../src/config/app-config';
import { sparePort } from './system/harness/mariadb-server';
import { expectLeafError, inject, tempDir } from './support/app';
import { createPostgresTestDatabase, type PostgresTestDatabase } from './support/postgres-database';
import { describeWithServices } from './support/services';

jest.setTimeout(60_000);

/** A CA and one certificate it signed for 127.0.0.1 (server and client), as PEM files in `dir`. */
function certificates(dir: string, name: string): { cert: string; key: string; ca: string } {
  const file = (suffix: string) => join(dir, `${name}-${suffix}`);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  const ca = ['-keyout', file('ca.key'), '-out', file('ca.crt'), '-subj', `/CN=${name}-ca`];
  openssl('req', '-x509', ...ec, ...ca, '-days', '1');
  openssl('req', ...ec, '-keyout', file('node.key'), '-out', file('node.csr'), '-subj', '/CN=leaf');
  writeFileSync(
    file('ext.cnf'),
    'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  openssl(
    'x509',
    '-req',
    '-in',
    file('node.csr'),
    '-CA',
    file('ca.crt'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('node.crt'),
    '-days',
    '1',
    '-extfile',
    file('ext.cnf'),
  );
  return { cert: file('node.crt'), key: file('node.key'), ca: file('ca.crt') };
}

/** `GET url` over HTTPS presenting `client` (or no certificate); the status, or the error's code. */
function httpsGet(
  url: string,
  ca: string,
  client: { cert: string; key: string } | null,
): Promise<number | string> {
  return new Promise((resolve) => {
    const request = httpsRequest(
      url,
      {
        ca: readFileSync(ca),
        ...(client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {}),
        agent: false,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    request.end();
  });
}

describeWithServices(['postgres'], 'the internal routes over mutual TLS', () => {
  let db: PostgresTestDatabase;
  let dir: ReturnType<typeof tempDir>;
  let good: ReturnType<typeof certificates>;
  let rogue: ReturnType<typeof certificates>;
  const apps: NestFastifyApplication[] = [];
  const internalPorts: number[] = [];
  let a: NestFastifyApplication;
  let b: NestFastifyApplication;

  async function start(): Promise<NestFastifyApplication> {
    const [port, internal] = [await sparePort(), await sparePort()];
    const app = await createApp(
      loadAppConfig({
        NODE_ENV: 'production',
        PORT: String(port),
        HOST: '127.0.0.1',
        LEAF_DB_URL: db.url,
        LEAF_SNOWFLAKE_ENABLED: 'false',
        LEAF_STATE_DIR: dir.path,
        LEAF_SEQUENCE_ENABLED: 'true',
        LEAF_SEQUENCE_GROUPS: '1',
        LEAF_SEQUENCE_HEARTBEAT_MS: '100',
        LEAF_INTERNAL_PORT: String(internal),
        LEAF_INTERNAL_TLS_CERT: good.cert,
        LEAF_INTERNAL_TLS_KEY: good.key,
        LEAF_INTERNAL_TLS_CA: good.ca,
      }),
      { logger: ['error'] },
    );
    apps.push(app);
    internalPorts.push(internal);
    await app.listen(port, '127.0.0.1');
    return app;
  }

  const state = (app: NestFastifyApplication) => app.get(SequenceService).stats().groups[0]!.state;

  beforeAll(async () => {
    dir = tempDir('leaf-mtls');
    good = certificates(dir.path, 'cluster');
    rogue = certificates(dir.path, 'rogue');
    db = await createPostgresTestDatabase({ migrate: true });
    await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('orders', 1, 1000)");
    b = await start();
    await eventually(() => expect(state(b)).toBe('issuer'), 20_000);
    a = await start();
    await eventually(() => {
      expect(a.get(SequenceService).stats().groups[0]!.issuer).toBe(
        `https://127.0.0.1:${internalPorts[0]}`,
      );
    }, 20_000);
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await db?.drop();
    dir?.remove();
  });

  it('forwards over HTTPS with the client certificate, without a cluster secret, in production', async () => {
    expect(state(a)).toBe('candidate');
    const ids: bigint[] = [];
    for (const app of [a, b, a]) {
      const answer = await inject(app, '/api/sequence/get/orders');
      expect([answer.statusCode, answer.body]).toEqual([200, expect.stringMatching(/^\d+$/)]);
      ids.push(BigInt(answer.body));
    }
    expect(ids[0]! < ids[1]! && ids[1]! < ids[2]!).toBe(true);
    expect(a.get(SequenceService).stats().forwardedCalls).toBeGreaterThanOrEqual(2);
  });

  it('the internal listener takes only a client certificate of the cluster CA, and serves only the internal routes', async () => {
    const probe = `https://127.0.0.1:${internalPorts[0]}/api/sequence/internal/instance`;
    expect(await httpsGet(probe, good.ca, good)).toBe(200);
    // The handshake fails: no answer at all, let alone the route's.
    const refused = [await httpsGet(probe, good.ca, null), await httpsGet(probe, good.ca, rogue)];
    for (const outcome of refused) {
      expect(outcome).toEqual(expect.any(String));
      expect(outcome).not.toBe('ECONNREFUSED');
    }
    // The public routes are not there.
    const publicRoute = `https://127.0.0.1:${internalPorts[0]}/api/sequence/get/orders`;
    expect(await httpsGet(publicRoute, good.ca, good)).toBe(404);
  });

  it('the public port answers the internal routes 404, as an unknown route', async () => {
    for (const app of [a, b]) {
      for (const url of [
        '/api/sequence/internal/instance',
        '/api/sequence/internal/ranges?keys=orders&counts=1',
      ]) {
        // The answer of an unknown route.
        const unknown = expectLeafError(await inject(app, '/api/nope'), 404, 'LEAF_HTTP_404');
        const answer = expectLeafError(await inject(app, url), 404, unknown.code);
        expect(answer.message).toBe(`Cannot GET ${url}`);
      }
    }
  });
});
