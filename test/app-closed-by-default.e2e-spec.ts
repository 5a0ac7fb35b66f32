/**
 * Closed by default in production (docs/security.md, "In production"): the monitoring pages
 * behind the admin token (or not served without one) unless the operator opens them,
 * `X-Content-Type-Options: nosniff` on every answer — routes, errors, 404s, answers of
 * Fastify's and Node's parsers — and the OpenAPI document describing the admin credential as
 * what it is; HTTPS from the application itself with `LEAF_TLS_CERT_FILE`/`LEAF_TLS_KEY_FILE`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { loadAppConfig } from '../src/config/app-config';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { inject, startApp, tempDir } from './support/app';

const TOKEN = 'an-admin-token-of-32-characters!';

function productionEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  // SQLite and an explicit worker ID are production's explicit opt-ins for one instance.
  return {
    NODE_ENV: 'production',
    LEAF_DB_URL: `sqlite:${join(dir, 'leaf.sqlite')}`,
    LEAF_DB_MIGRATE: 'true',
    LEAF_STATE_DIR: dir,
    LEAF_WORKER_ID: '9',
    ...extra,
  };
}

/** One raw request line on a socket; the whole answer as text. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('closed by default in production', () => {
  const dirs: Array<{ path: string; remove(): void }> = [];
  const apps: NestFastifyApplication[] = [];

  async function start(extra: Record<string, string> = {}, listen = false) {
    const dir = tempDir('leaf-closed');
    dirs.push(dir);
    const app = await startApp(productionEnv(dir.path, extra), { listen });
    apps.push(app);
    return app;
  }

  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const dir of dirs) dir.remove();
  });

  it('serves /db and /cache only with the admin token', async () => {
    const app = await start({ LEAF_ADMIN_TOKEN: TOKEN });
    for (const page of ['/db', '/cache']) {
      expect((await inject(app, page)).statusCode).toBe(401);
      const answer = await inject(app, page, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(answer.statusCode).toBe(200);
    }
  });

  it('does not serve them without an admin token, and opens them when the operator says so', async () => {
    const closed = await start();
    expect((await inject(closed, '/db')).statusCode).toBe(404);
    expect((await inject(closed, '/cache')).statusCode).toBe(404);
    const open = await start({ LEAF_MONITOR_PAGES: 'open' });
    expect((await inject(open, '/db')).statusCode).toBe(200);
  });

  it('sends X-Content-Type-Options: nosniff on every answer', async () => {
    const app = await start({ LEAF_ADMIN_TOKEN: TOKEN }, true);
    const answers = [
      await inject(app, '/api/segment/get/leaf-segment-test'),
      await inject(app, '/api/segment/ids/leaf-segment-test?count=2'),
      await inject(app, '/api/segment/get/no-such-tag'),
      await inject(app, '/api/segment/ids/leaf-segment-test?count=0'),
      await inject(app, '/api/segment/get/%zz'),
      await inject(app, '/no/such/route'),
      await inject(app, '/health/ready'),
      await inject(app, '/metrics'),
      await inject(app, '/docs-json'),
      await inject(app, '/db'),
      await inject(app, '/admin/tags', { headers: { authorization: `Bearer ${TOKEN}` } }),
    ];
    expect(answers.map((a) => a.statusCode)).toEqual([
      200, 200, 404, 400, 400, 404, 200, 200, 200, 401, 200,
    ]);
    for (const answer of answers) expect(answer.headers['x-content-type-options']).toBe('nosniff');
    // A request Node's HTTP parser refuses never reaches Fastify: answered by clientErrorHandler.
    const { port } = app.getHttpServer().address() as { port: number };
    const refused = await raw(port, 'GET /api/segment/get/\u00ff HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(refused).toMatch(/^HTTP\/1\.1 400 /);
    expect(refused.toLowerCase()).toContain('x-content-type-options: nosniff');
  });

  it('describes the admin credential as an opaque bearer token, not a JWT', async () => {
    const app = await start({ LEAF_ADMIN_TOKEN: TOKEN });
    const doc = JSON.parse((await inject(app, '/docs-json')).body) as {
      components: { securitySchemes: Record<string, Record<string, unknown>> };
    };
    const admin = doc.components.securitySchemes.admin;
    expect(admin).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(admin.bearerFormat).toBeUndefined();
    expect(JSON.stringify(doc.components.securitySchemes)).not.toContain('JWT');
    expect(String(admin.description)).toContain('LEAF_ADMIN_TOKEN');
  });

  it('serves HTTPS with LEAF_TLS_CERT_FILE and LEAF_TLS_KEY_FILE (both, or neither)', async () => {
    const dir = tempDir('leaf-tls');
    dirs.push(dir);
    const cert = join(dir.path, 'cert.pem');
    const key = join(dir.path, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    expect(() => loadAppConfig({ LEAF_TLS_CERT_FILE: cert })).toThrow(/go together/);
    const app = await start({ LEAF_TLS_CERT_FILE: cert, LEAF_TLS_KEY_FILE: key }, true);
    const { port } = app.getHttpServer().address() as { port: number };
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      httpsGet(
        {
          host: '127.0.0.1',
          port,
          path: '/api/segment/get/leaf-segment-test',
          ca: readFileSync(cert),
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      ).on('error', reject);
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(/^\d+$/);
  });
});
