import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { hostname } from 'node:os';
import { LoggerModule } from 'nestjs-pino';
import type { DynamicModule } from '@nestjs/common';
import { redactSecrets } from 'nestjs-leaf/errors';
import { destination, levels as pinoLevels, stdTimeFunctions, type LoggerOptions } from 'pino';
import type { AppConfig } from '../config/app-config';
import type { LogLevelName } from '../config/app-env';

/** Header carrying the request ID, read from the request and echoed in the response. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** A caller's request ID is taken as is when it looks like one; anything else is replaced. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's ID (Fastify's `genReqId`, so `request.id` and pino-http's `reqId` agree): the
 * caller's `x-request-id` when well-formed, else a fresh UUID. {@link echoRequestId} returns it
 * (when the caller sent one, or with the access log on).
 */
export function requestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Echoes the request ID in the response's `x-request-id` header whenever it means something to
 * the caller: when the request carried an `x-request-id` (the caller's own, or the UUID that
 * replaced a malformed one) and, with `everyRequest` (the access log on, whose lines carry
 * it), on every response. A UUID made up for a request that sent none is written nowhere
 * else while the access log is off, so it is not sent: the header, Fastify's `reply.header`
 * and Node's validation of one more header line were the largest part of what the
 * application added to an ID request (docs/records/benchmarks-journal.md, *Short rounds, and
 * the request-ID echo*).
 */
export function echoRequestId(fastify: FastifyInstance, everyRequest: boolean): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    if (everyRequest || request.raw.headers[REQUEST_ID_HEADER] !== undefined)
      void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}

/** Where the log lines go: pino's destination on stdout (a sonic-boom stream). */
export type LogDestination = ReturnType<typeof destination>;

/** Bytes of log lines gathered before one write to stdout (a batch, not a write per line). */
export const LOG_BATCH_BYTES = 4096;

/** The longest a line waits in a batch that is not full (a quiet service). */
export const LOG_FLUSH_INTERVAL_MS = 250;

/**
 * The destination of every JSON log line: stdout, written asynchronously in batches of
 * {@link LOG_BATCH_BYTES} (a full batch is written as soon as the previous write is done, a
 * partial one after at most {@link LOG_FLUSH_INTERVAL_MS}), so a request costs no write
 * system call of its own and the event loop never waits for stdout (docs/benchmarks.md: a
 * synchronous write per request cost a tenth of an ID route's throughput). Nothing buffered
 * is lost when the process ends: `main.ts` flushes it ({@link flushLogs}) after a graceful
 * stop, before a refusal to start exits and on an uncaught error, and pino writes whatever
 * is left synchronously at `exit`. Only a `kill -9` loses what is not yet written: the last
 * {@link LOG_FLUSH_INTERVAL_MS} of a quiet service's lines, or the batch being gathered.
 */
export function createLogDestination(): LogDestination {
  return destination({
    dest: 1,
    sync: false,
    minLength: LOG_BATCH_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
  });
}

/**
 * Writes out every buffered line and resolves once stdout has it (or after `timeoutMs`, so a
 * stuck stdout cannot hold an exit forever). Never rejects.
 */
export function flushLogs(logs: LogDestination, timeoutMs = 5_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs).unref();
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      logs.flush(done);
    } catch {
      // A destroyed stream (EPIPE: nobody reads stdout any more) has nothing left to write.
      done();
    }
  });
}

/**
 * A log call's argument with its text passed through `redactSecrets`: a string, an error
 * (its message and stack) and the string and error properties of a merging object, one
 * level deep (what Nest's logger and the library pass).
 */
function redactLogArgument(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactSecrets(value, secrets);
  if (value instanceof Error) {
    const copy = new Error(redactSecrets(value.message, secrets));
    copy.name = value.name;
    copy.stack = value.stack === undefined ? undefined : redactSecrets(value.stack, secrets);
    return copy;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    copy[key] =
      typeof field === 'string' || field instanceof Error
        ? redactLogArgument(field, secrets)
        : field;
  }
  return copy;
}

/**
 * pino's options for the application's logs: JSON lines with `level` as a label and an ISO
 * `time`; every line's text through `redactSecrets` (a password in a URL, a bearer token,
 * each of `secrets`) before it is written (docs/security.md, "Secrets").
 */
export function logOptions(level: LogLevelName, secrets: readonly string[] = []): LoggerOptions {
  return {
    level,
    timestamp: stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    hooks: {
      logMethod(args, method) {
        method.apply(
          this,
          args.map((arg: unknown) => redactLogArgument(arg, secrets)) as Parameters<typeof method>,
        );
      },
    },
  };
}

/**
 * Structured JSON logs on stdout through pino (nestjs-pino), written to `logs`
 * ({@link createLogDestination}; without it, pino's synchronous stdout): Nest's `Logger`
 * calls of the library and the app become JSON lines (`level`, `time`, `context`, `msg`), and
 * each request gets an ID and, with `LEAF_ACCESS_LOG=true`, one access-log line when it
 * completes ({@link accessLog}; no other per-request line: the ID hot path logs nothing).
 * Request lines carry the method, URL, status and response time, never headers (the admin
 * route's bearer token).
 */
export function loggingModule(config: AppConfig, logs?: LogDestination): DynamicModule {
  const options = logOptions(config.log.level, config.log.secrets);
  return LoggerModule.forRoot({
    // No per-request middleware: pino-http and its AsyncLocalStorage context per request
    // (through Fastify's Express-middleware layer) tripled the cost of an ID request. The
    // access log is one Fastify hook instead ({@link accessLog}); pino here only sets up the
    // root logger that Nest's Logger calls go through.
    forRoutes: [],
    pinoHttp: logs ? [options, logs] : options,
  });
}

/**
 * The access log: one line per request when it completes, `{reqId, req: {method, url},
 * res: {statusCode}, responseTime}` — never headers (the admin route's bearer token) — at
 * `info` (`warn` for a 5xx), written to `logs` like every other line. A Fastify `onResponse`
 * hook: nothing runs per request when it is off.
 */
export function accessLog(
  fastify: FastifyInstance,
  logs: LogDestination,
  level: LogLevelName,
): void {
  const write = accessLogWriter(logs, level);
  fastify.addHook('onResponse', (request, reply, done) => {
    write(request.id, request.method, request.url, reply.statusCode, reply.elapsedTime);
    done();
  });
}

/**
 * Writes access-log lines to `logs`, each the very line pino writes for
 * `logger.info({ reqId, req: { method, url }, res: { statusCode }, responseTime }, msg)` with
 * {@link logOptions} (logging.module.spec.ts compares the two), but built as one string:
 * pino's general-purpose serialization of the object took about twice the CPU time
 * (docs/records/benchmarks-journal.md, *HTTP single-ID routes*). The ISO time is formatted
 * once per millisecond.
 */
export function accessLogWriter(
  logs: Pick<LogDestination, 'write'>,
  level: LogLevelName,
): (reqId: string, method: string, url: string, statusCode: number, elapsedMs: number) => void {
  const threshold = pinoLevels.values[level] ?? Infinity;
  const info = threshold <= pinoLevels.values.info;
  const warn = threshold <= pinoLevels.values.warn;
  // pino's default `base`: the process ID and the host name, after the level and the time.
  const base = `","pid":${process.pid},"hostname":${JSON.stringify(hostname())},"reqId":`;
  let lastMs = -1;
  let lastTime = '';
  return (reqId, method, url, statusCode, elapsedMs) => {
    const isWarn = statusCode >= 500;
    if (!(isWarn ? warn : info)) return;
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      lastTime = new Date(now).toISOString();
    }
    const responseTime = Math.round(elapsedMs * 10) / 10;
    const methodJson = JSON.stringify(method);
    const urlJson = JSON.stringify(url);
    logs.write(
      `{"level":"${isWarn ? 'warn' : 'info'}","time":"${lastTime}${base}${JSON.stringify(reqId)}` +
        `,"req":{"method":${methodJson},"url":${urlJson}},"res":{"statusCode":${statusCode}}` +
        `,"responseTime":${responseTime},"msg":${JSON.stringify(`${method} ${url} ${statusCode} ${responseTime} ms`)}}\n`,
    );
  };
}
