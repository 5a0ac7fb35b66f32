import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/**
 * Error codes (mysql2, pg's SQLSTATEs, Node sockets) that mean "the database is not answering
 * yet", as opposed to a configuration it will never accept (wrong password, unknown database).
 */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  '57P01', // PostgreSQL admin_shutdown
  '57P03', // PostgreSQL cannot_connect_now: starting up or shutting down
  '53300', // PostgreSQL too_many_connections
]);

/** pg's connect timeout carries no code, only these words. */
const PG_CONNECT_TIMEOUT =
  /timeout exceeded when trying to connect|Connection terminated due to connection timeout/;

/** True when `error` (or its cause) says the database server did not answer. */
export function isDatabaseUnreachable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE.has(code)) return true;
    if (e instanceof Error && PG_CONNECT_TIMEOUT.test(e.message)) return true;
    e = (e as { cause?: unknown }).cause ?? (e as { driverError?: unknown }).driverError;
  }
  return false;
}

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 15_000;

/**
 * Opens the application's DataSource (and applies migrations when asked). On MySQL or
 * PostgreSQL, a
 * database that does not answer at start is not fatal: the DataSource stays uninitialised
 * (the store's queries fail with `AllocationError`, segment mode answers
 * `LEAF_SEGMENT_NOT_INITIALIZED`) and the connection is retried with back-off until it
 * succeeds; segment mode then joins by itself. Anything else (SQLite, a rejected login, an
 * unknown database, a failed migration) still fails start-up.
 */
export class DatabaseConnector {
  private readonly logger = new Logger('Database');
  private timer: NodeJS.Timeout | null = null;
  private attempt: Promise<void> | null = null;
  private stopped = false;

  constructor(
    readonly dataSource: DataSource,
    private readonly migrate: boolean,
    private readonly retryOnUnreachable: boolean,
    /** The variable that names this database, for the log lines. */
    private readonly variable = 'LEAF_DB_URL',
  ) {}

  /** Connects now; or, when the database does not answer and retries are allowed, later. */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (error) {
      if (!this.retryOnUnreachable || !isDatabaseUnreachable(error)) throw error;
      this.logger.warn(
        `The database does not answer (${describe(error)}): starting without it. Segment mode ` +
          'joins by itself once it answers (retrying with back-off); snowflake mode, unless it leases its worker ID there (then it waits up to LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS), is not affected. ' +
          `Check ${this.variable} and the database server.`,
      );
      this.schedule(FIRST_RETRY_MS);
    }
  }

  /** Stops retrying and closes the DataSource. Never throws. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.attempt?.catch(() => undefined);
    try {
      if (this.dataSource.isInitialized) await this.dataSource.destroy();
    } catch (error) {
      this.logger.warn(`Closing the database failed: ${describe(error)}`);
    }
  }

  private async connect(): Promise<void> {
    await this.dataSource.initialize();
    try {
      if (this.migrate) await this.dataSource.runMigrations({ transaction: 'each' });
    } catch (error) {
      await this.dataSource.destroy();
      throw error;
    }
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.attempt = this.connect()
        .then(
          () => this.logger.log('The database answers: connected'),
          (error: unknown) => {
            if (this.stopped) return;
            if (!isDatabaseUnreachable(error)) {
              this.logger.error(
                `Connecting to the database failed for a reason a retry will not fix: ${describe(error)}`,
              );
            }
            this.schedule(Math.min(delayMs * 2, MAX_RETRY_MS));
          },
        )
        .finally(() => {
          this.attempt = null;
        });
    }, delayMs);
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}
