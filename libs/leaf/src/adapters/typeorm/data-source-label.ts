import type { DataSource } from 'typeorm';
import { dialectOf } from './sql-dialect';

/** `host:port/database` of a DataSource, as logs and readiness name it (never a password). */
export function dataSourceLabel(dataSource: DataSource): string {
  return dataSourceAddress(dataSource) ?? 'database';
}

/** `host:port/database` of a DataSource, or `null` when its options do not say. */
export function dataSourceAddress(dataSource: DataSource): string | null {
  const options = dataSource?.options as
    { host?: string; port?: number; database?: string; url?: string } | undefined;
  if (!options) return null;
  const defaultPort = dialectOf(dataSource)?.defaultPort ?? 3306;
  if (options.url) {
    try {
      const url = new URL(options.url);
      return `${url.hostname}:${url.port || defaultPort}${url.pathname}`;
    } catch {
      return null;
    }
  }
  return `${options.host ?? 'localhost'}:${options.port ?? defaultPort}/${options.database ?? ''}`;
}
