import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions } from 'fastify';
import { createApp } from '../../src/bootstrap';
import { loadAppConfig } from '../../src/config/app-config';
import { sparePort } from '../system/harness/mariadb-server';

export { sparePort };

/** An answer of `inject`, the parts the specs look at. */
export interface InjectedAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: string;
}

/**
 * Builds the application from `env` exactly as `main.ts` does (`loadAppConfig(env)` then
 * `createApp(config)`), and starts it: listening on 127.0.0.1 with an ephemeral port when
 * `listen` is set, otherwise initialised for `inject` only. The caller closes it.
 */
export async function startApp(
  env: Record<string, string>,
  options: { listen?: boolean } = {},
): Promise<NestFastifyApplication> {
  const app = await createApp(loadAppConfig(env), { logger: ['error', 'warn'] });
  try {
    if (options.listen) {
      await app.listen(0, '127.0.0.1');
    } else {
      await app.init();
      await app.getHttpAdapter().getInstance().ready();
    }
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}

/**
 * One request through Fastify's `inject` (no socket); `body` is sent as JSON (a string as it
 * is, to send what is not JSON).
 */
export async function inject(
  app: NestFastifyApplication,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<InjectedAnswer> {
  const { body } = options;
  const request: InjectOptions = {
    method: (options.method ?? 'GET') as InjectOptions['method'],
    url,
    headers:
      body === undefined
        ? options.headers
        : { 'content-type': 'application/json', ...options.headers },
    ...(body !== undefined
      ? { payload: typeof body === 'string' ? body : JSON.stringify(body) }
      : {}),
  };
  const res = await app.getHttpAdapter().getInstance().inject(request);
  return { statusCode: res.statusCode, headers: res.headers, body: res.body };
}

/** The parsed JSON error body of an answer, after checking the error contract (README, "Error codes"). */
export function expectLeafError(
  answer: InjectedAnswer,
  status: number,
  code: string,
): { statusCode: number; code: string; message: string; leafCode?: number } {
  expect({ status: answer.statusCode, body: answer.body }).toEqual({
    status,
    body: expect.any(String),
  });
  expect(String(answer.headers['content-type'])).toMatch(/^application\/json/);
  expectNoStackTrace(answer.body);
  const body = JSON.parse(answer.body) as {
    statusCode: number;
    code: string;
    message: string;
    leafCode?: number;
  };
  expect(body).toEqual(
    expect.objectContaining({ statusCode: status, code, message: expect.any(String) }),
  );
  expect(Object.keys(body).sort()).toEqual(
    body.leafCode === undefined
      ? ['code', 'message', 'statusCode']
      : ['code', 'leafCode', 'message', 'statusCode'],
  );
  return body;
}

/** A body never carries a stack trace or file paths. */
export function expectNoStackTrace(body: string): void {
  expect(body).not.toMatch(/\n\s+at |\bat .+\.(ts|js):\d+|node_modules|"stack"/);
}

/** A fresh, empty temporary directory; `remove()` deletes it with its contents. */
export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * The application from `env` with sequence mode on (one group unless `env` says), listening on 127.0.0.1 at a
 * spare port that it advertises to itself, so every route — the internal ones too — is
 * served by this one instance. The caller closes it.
 */
export async function startSelfAdvertisingApp(
  env: Record<string, string>,
): Promise<NestFastifyApplication> {
  const port = await sparePort();
  const app = await createApp(
    loadAppConfig({
      LEAF_SEQUENCE_GROUPS: '1',
      ...env,
      PORT: String(port),
      LEAF_SEQUENCE_ENABLED: 'true',
      LEAF_SEQUENCE_ADVERTISE: `http://127.0.0.1:${port}`,
    }),
    { logger: ['error'] },
  );
  await app.listen(port, '127.0.0.1');
  return app;
}
