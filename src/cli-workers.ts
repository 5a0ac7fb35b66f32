/**
 * `leaf workers`: the snowflake worker IDs of a namespace, from ZooKeeper or from
 * `leaf_worker_lease` (docs/operations.md, "Worker IDs").
 */
import { createZookeeperClient } from 'nestjs-leaf/ports';
import { createWorkerLeaseStore } from 'nestjs-leaf/storage/typeorm';
import {
  LEAF_OPTION_RULES,
  leaseRowWorkerInfo,
  workerIdSource,
  type SnowflakeWorkerInfo,
  type WorkerIdSource,
} from 'nestjs-leaf/server';
import { workerRowJson } from './admin/worker-row.json';
import {
  CliError,
  configured,
  table,
  usage,
  withDataSource,
  type Env,
  type Output,
} from './cli-support';
import { loadAppConfig } from './config/app-config';
import { effectiveLeafOptions } from './config/leaf-options.mapping';

/** Runs `leaf workers`. @throws {CliError} with the exit code of a failure. */
export async function workers(args: string[], output: Output, env: Env): Promise<void> {
  if (args.length > 0) throw usage('workers takes no argument');
  // Without ZooKeeper: worker IDs leased from the database (docs/snowflake.md, "On the database").
  if (!env.LEAF_ZK_ADDRESS?.trim()) return databaseWorkers(output, env);
  const config = configured(() => loadAppConfig({ ...env, LEAF_SEGMENT_ENABLED: 'false' }));
  const connect = config.options['snowflake.zookeeper.connect'];
  if (connect === undefined) throw usage('workers needs LEAF_ZK_ADDRESS');
  const options = configured(() => effectiveLeafOptions(config));
  if (!options.snowflake) throw usage('workers needs LEAF_ZK_ADDRESS and snowflake mode');
  const name = options.name;
  let source: WorkerIdSource;
  try {
    source = workerIdSource(options, createZookeeperClient);
  } catch (error) {
    throw new CliError(3, `cannot load the ZooKeeper client: ${(error as Error).message}`);
  }
  let list: SnowflakeWorkerInfo[];
  try {
    await source.open?.();
    list = await source.list(name, Date.now());
  } catch (error) {
    throw new CliError(3, `ZooKeeper at ${connect}: ${(error as Error).message}`);
  } finally {
    await source.close();
  }
  printWorkers(output, name, list, `/snowflake/${name}`);
}

/** `leaf workers` on the rows of `leaf_worker_lease` in the database of `LEAF_DB_URL`. */
async function databaseWorkers(output: Output, env: Env): Promise<void> {
  if (!/^(mysql|mariadb|postgres(ql)?):/.test(env.LEAF_DB_URL?.trim() ?? ''))
    throw usage('workers needs LEAF_ZK_ADDRESS, or LEAF_DB_URL=mysql://… or postgres://…');
  const { options } = configured(() => loadAppConfig({ ...env, LEAF_SNOWFLAKE_ENABLED: 'false' }));
  const name = options.name ?? LEAF_OPTION_RULES.name.default;
  const leased = await withDataSource(env, (dataSource) =>
    createWorkerLeaseStore(dataSource).list(name),
  ).catch((error: unknown) => {
    throw error instanceof CliError
      ? error
      : new CliError(3, `leaf_worker_lease: ${(error as Error).message}`);
  });
  const now = Date.now();
  printWorkers(
    output,
    name,
    leased.map((row) => leaseRowWorkerInfo(row, name, now)),
    `leaf_worker_lease (${name})`,
  );
}

/** The workers `list` of namespace `name` (found under `where`), as a table or JSON. */
function printWorkers(
  output: Output,
  name: string,
  list: SnowflakeWorkerInfo[],
  where: string,
): void {
  const now = Date.now();
  const rows = list.map((worker) => workerRowJson(worker, now));
  if (output.json) return output.out(JSON.stringify({ name, workers: rows }));
  if (rows.length === 0) return output.out(`No snowflake workers under ${where}`);
  output.out(
    table(
      [
        'worker',
        'identity',
        'held by',
        'alive',
        'last write',
        'reservedUntil',
        'horizon (until)',
        'holder pid',
      ],
      rows.map((r) => [
        String(r.workerId),
        r.identity,
        r.heldBy ?? '-',
        r.alive ? 'yes' : 'no',
        r.lastWriteIso ?? (r.error ? `unreadable: ${r.error}` : '-'),
        r.reservedUntilIso ?? '-',
        r.horizonIso ?? '-',
        r.holder?.pid != null ? String(r.holder.pid) : '-',
      ]),
    ),
  );
}

/** Where {@link runCli} reads its variables and writes its lines. */
