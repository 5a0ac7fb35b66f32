/**
 * The application's migrations (migrations/: the library's `LEAF_MIGRATIONS`, then the
 * application's own, recorded in `leaf_migrations`) as a plain Node script, `npm run migrate`:
 * the same set and database settings as the TypeORM CLI's migrations/data-source.ts, with
 * plain output and exit codes for a migration job.
 *
 * ```sh
 * node dist/src/database/migrate.js           # apply the pending migrations (= run)
 * node dist/src/database/migrate.js status    # list applied and pending migrations
 * node dist/src/database/migrate.js revert    # undo the last one (refuses on allocated ranges)
 * ```
 *
 * Reads `LEAF_DB_URL` (and `NODE_ENV`) exactly as the application does, nothing else: a
 * migration job needs neither ZooKeeper nor a worker identity. With `NODE_ENV=production`
 * `LEAF_DB_URL` must be set. With `LEAF_SEGMENT_HIGH_WATER_DB_URL` the marks' database gets
 * the same command, with its own set (`LEAF_HIGH_WATER_MIGRATIONS`). Exit code 0 on success,
 * 1 on failure, 2 on a usage error.
 */
import { DataSource, MigrationExecutor } from 'typeorm';
import { redactSecrets } from 'nestjs-leaf/errors';
import { secretValues } from '../config/app-env';
import {
  loadDatabaseConfig,
  parseDatabaseConfig,
  type DatabaseConfig,
} from '../config/database-config';
import { buildDataSourceOptions, type DatabaseRole } from './data-source.options';

/** What {@link migrate} can do. */
export const MIGRATE_COMMANDS = ['run', 'status', 'revert'] as const;
export type MigrateCommand = (typeof MIGRATE_COMMANDS)[number];

const USAGE = `Usage: node dist/src/database/migrate.js [${MIGRATE_COMMANDS.join('|')}]
  run     apply the pending migrations (default)
  status  list applied ([X]) and pending ([ ]) migrations
  revert  undo the last applied migration; refuses to drop a leaf_alloc holding allocated ranges
Reads LEAF_DB_URL (mysql://user:pass@host:3306/db, postgres://user:pass@host:5432/db or sqlite:<file>);
with LEAF_SEGMENT_HIGH_WATER_DB_URL or LEAF_REGION_DB_URL, that database gets the same command.`;

/** How the output names each database beside its kind. */
const ROLE_NAMES: Record<DatabaseRole, string> = {
  allocation: '',
  'high-water': ' (high-water marks)',
  region: ' (region registry)',
};

/**
 * Runs `command` against the database of `env.LEAF_DB_URL`; resolves with the exit code.
 * Never rejects: failures are written to `err` and give 1.
 */
export async function migrate(
  command: MigrateCommand,
  env: NodeJS.ProcessEnv = process.env,
  out: (line: string) => void = (line) => console.log(line),
  err: (line: string) => void = (line) => console.error(redactSecrets(line, secretValues(env))),
): Promise<number> {
  const opened: DataSource[] = [];
  try {
    // Only the database settings: the other variables (ZooKeeper, worker identity) belong to
    // the service and must not stop a migration job.
    const database = loadDatabaseConfig(env);
    const targets: Array<[DatabaseConfig, DatabaseRole]> = [[database, 'allocation']];
    // The high-water marks' own database (LEAF_SEGMENT_HIGH_WATER_DB_URL) and the region
    // registry's (LEAF_REGION_DB_URL) get their schema too.
    const { highWater, region } = parseDatabaseConfig(env);
    if (highWater) targets.push([highWater, 'high-water']);
    if (region) targets.push([region, 'region']);
    for (const [target, role] of targets) {
      const dataSource = new DataSource(buildDataSourceOptions(target, role));
      opened.push(dataSource);
      await dataSource.initialize();
      const kind =
        target.type === 'sqlite'
          ? `sqlite:${target.path}`
          : target.type === 'postgres'
            ? 'PostgreSQL'
            : 'MySQL';
      await runCommand(command, dataSource, `${kind}${ROLE_NAMES[role]}`, out);
    }
    return 0;
  } catch (error) {
    const code =
      error instanceof Error && 'code' in error && typeof error.code === 'string'
        ? `[${error.code}] `
        : '';
    err(`Leaf migration failed: ${code}${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    for (const dataSource of opened) {
      if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
    }
  }
}

/** Runs `command` on the open `dataSource`, describing it as `where`. */
async function runCommand(
  command: MigrateCommand,
  dataSource: DataSource,
  where: string,
  out: (line: string) => void,
): Promise<void> {
  if (command === 'run') {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    for (const migration of applied) out(`Applied ${migration.name}`);
    out(
      applied.length === 0
        ? `Schema of ${where} is up to date: nothing to apply`
        : `Applied ${applied.length} migration(s) to ${where}`,
    );
    return;
  }
  const executor = new MigrationExecutor(dataSource);
  const executed = await executor.getExecutedMigrations();
  if (command === 'status') {
    const pending = await executor.getPendingMigrations();
    const all = [
      ...executed.map((migration) => ({ migration, applied: true })),
      ...pending.map((migration) => ({ migration, applied: false })),
    ].sort((a, b) => a.migration.timestamp - b.migration.timestamp);
    for (const { migration, applied } of all) out(`[${applied ? 'X' : ' '}] ${migration.name}`);
    out(`${pending.length} pending migration(s) on ${where}`);
    return;
  }
  const last = [...executed].sort((a, b) => b.timestamp - a.timestamp)[0];
  if (last === undefined) return out(`Nothing to revert on ${where}: no migration is applied`);
  // The migration's down() refuses to drop allocated ranges (re-creating the table would
  // re-issue their IDs) or held marks: that error ends here with exit code 1.
  await dataSource.undoLastMigration({ transaction: 'each' });
  out(`Reverted ${last.name} on ${where}`);
}

/** Parses the command line: one optional command, or `--help`. */
export function parseMigrateArgs(
  args: readonly string[],
): { command: MigrateCommand } | { help: true } | { error: string } {
  if (args.some((arg) => arg === '--help' || arg === '-h')) return { help: true };
  if (args.length > 1) return { error: `expected at most one command, got ${args.join(' ')}` };
  const command = args[0] ?? 'run';
  return (MIGRATE_COMMANDS as readonly string[]).includes(command)
    ? { command: command as MigrateCommand }
    : { error: `unknown command "${command}"` };
}

if (require.main === module) {
  const parsed = parseMigrateArgs(process.argv.slice(2));
  if ('help' in parsed) {
    console.log(USAGE);
  } else if ('error' in parsed) {
    console.error(`${parsed.error}\n${USAGE}`);
    process.exitCode = 2;
  } else {
    void migrate(parsed.command).then((code) => {
      process.exitCode = code;
    });
  }
}
