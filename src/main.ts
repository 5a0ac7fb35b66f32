// First, before anything else is loaded: keeps nextTick on V8's fast path (next-tick-shape.ts).
import './next-tick-shape';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { Logger, type INestApplication } from '@nestjs/common';
import { redactSecrets } from 'nestjs-leaf/errors';
import {
  LEAF_ISSUER_ELECTION,
  LEAF_RESOLVED_OPTIONS,
  LEAF_WORKER_ID_SOURCE,
  type IssuerElection,
  type ResolvedLeafOptions,
  type WorkerIdSource,
} from 'nestjs-leaf/server';
import { createApp } from './bootstrap';
import { loadAppConfig } from './config/app-config';
import { secretValues } from './config/app-env';
import { createLogDestination, flushLogs, type LogDestination } from './logging/logging.module';

/** How long a graceful stop may take before the process gives up and exits 1. */
const SHUTDOWN_GUARD_MS = 30_000;

/**
 * SIGTERM/SIGINT close the application: in-flight requests are answered, the segment cache
 * drains and hands back its unused ranges, the snowflake lease is recorded and the liveness
 * node deleted, ZooKeeper and the database are closed, the buffered log lines are written.
 * The process then ends by itself — exit code 0 — once nothing is left open; a guard timer
 * (which does not keep it alive) exits 1 if something does.
 */
function closeOnSignals(app: INestApplication, logs: LogDestination): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) return;
    closing = true;
    Logger.log(`${signal} received: shutting down`, 'Bootstrap');
    setTimeout(() => {
      console.error(
        `Leaf: the shutdown did not finish within ${SHUTDOWN_GUARD_MS} ms (an open handle keeps the process alive); exiting 1`,
      );
      process.exit(1);
    }, SHUTDOWN_GUARD_MS).unref();
    app
      .close()
      .then(
        () => Logger.log('Shut down', 'Bootstrap'),
        (error: unknown) => {
          console.error(`Leaf: the shutdown failed: ${String(error)}`);
          process.exitCode = 1;
        },
      )
      .then(() => flushLogs(logs));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/**
 * An uncaught error ends the process with exit code 1, as Node's default does, once the log
 * lines before it are written (the asynchronous destination may hold a batch).
 */
function exitOnUncaughtError(logs: LogDestination): void {
  let exiting = false;
  process.on('uncaughtException', (error: unknown) => {
    console.error(
      `Leaf: uncaught error, exiting 1: ${redactSecrets(stackOf(error), secretValues(process.env))}`,
    );
    if (exiting) return;
    exiting = true;
    process.exitCode = 1;
    void flushLogs(logs, 1_000).finally(() => process.exit(1));
  });
}

/** An error's stack (else its message), or a thrown value as text. */
function stackOf(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

async function main(logs: LogDestination): Promise<void> {
  const config = loadAppConfig();
  // Created first, so that every line below is logged through it (JSON on stdout).
  const app = await createApp(config, { logs });
  // What the library runs with (its defaults applied). Relative paths (./data) follow the
  // working directory: say where state really lives.
  const options = app.get<ResolvedLeafOptions>(LEAF_RESOLVED_OPTIONS);
  const db = config.segment.database;
  const worker = options.snowflake ? app.get<WorkerIdSource>(LEAF_WORKER_ID_SOURCE) : null;
  const segment = options.segment
    ? `on ${db.type === 'sqlite' ? `sqlite:${resolve(db.path)}` : db.type === 'postgres' ? 'PostgreSQL' : 'MySQL'}`
    : 'off';
  const snowflake =
    options.snowflake && worker
      ? `${worker.describe()}, state in ${resolve(options.snowflake.stateDir)}`
      : 'off';
  const sequence = options.sequence
    ? `issuers elected ${app.get<IssuerElection>(LEAF_ISSUER_ELECTION).describe()}`
    : 'off';
  Logger.log(`Segment ${segment}; snowflake ${snowflake}; sequence ${sequence}`, 'Bootstrap');
  if ((options.segment && db.type === 'sqlite') || worker?.kind === 'embedded') {
    Logger.warn(
      'Embedded configuration (SQLite file and/or a worker ID without ZooKeeper): one instance only. ' +
        'Production uses LEAF_DB_URL=mysql://... or postgres://... (worker IDs leased there) or LEAF_ZK_ADDRESS; with NODE_ENV=production the embedded defaults are refused.',
      'Bootstrap',
    );
  }
  for (const warning of config.warnings) Logger.warn(warning, 'Bootstrap');
  closeOnSignals(app, logs);
  await app.listen(config.port, config.host);
  // The bound port, not the configured one: PORT=0 picks a free port.
  const { port } = app.getHttpServer().address() as AddressInfo;
  const scheme = config.tls === null ? 'http' : 'https';
  Logger.log(`Leaf listening on ${scheme}://${config.host}:${port}`, 'Bootstrap');
  // Written now rather than with the next batch: whoever waits for this line sees it at once.
  await flushLogs(logs);
}

const logs = createLogDestination();
exitOnUncaughtError(logs);
main(logs).catch((error: unknown) => {
  // A refusal to start says what is wrong and exits non-zero, without a stack for known
  // causes. The stable code (e.g. LEAF_STARTUP_CLOCK_BEHIND) leads, for operators and scripts.
  const code =
    error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : null;
  const message = code !== null ? `[${code}] ${(error as Error).message}` : stackOf(error);
  console.error(`Leaf failed to start: ${redactSecrets(message, secretValues(process.env))}`);
  // The lines before the refusal say what was tried: write them out before exiting.
  process.exitCode = 1;
  void flushLogs(logs, 1_000).finally(() => process.exit(1));
});
