/**
 * The logging the snowflake components need, so the pure classes stay free of Nest;
 * Nest's `Logger` fits it as is.
 */
export interface SnowflakeLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** A logger that drops everything. */
export const silentSnowflakeLogger: SnowflakeLogger = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
