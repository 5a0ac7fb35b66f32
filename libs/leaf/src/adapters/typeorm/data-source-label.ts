import type { DataSource } from 'typeorm';

/** `host:port/database` of a DataSource, as logs and readiness name it (never a password). */
export function dataSourceLabel(dataSource: DataSource): string {
  const options = dataSource?.options as
    { host?: string; port?: number; database?: string; url?: string } | undefined;
  if (!options) return 'database';
  const defaultPort = dataSource.options.type === 'postgres' ? 5432 : 3306;
  if (options.url) {
    try {
      const url = new URL(options.url);
      return `${url.hostname}:${url.port || defaultPort}${url.pathname}`;
    } catch {
      return 'database';
    }
  }
  return `${options.host ?? 'localhost'}:${options.port ?? defaultPort}/${options.database ?? ''}`;
}
