import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import { createApp } from './bootstrap';
import { loadAppConfig } from './config/app-config';

async function main(): Promise<void> {
  const config = loadAppConfig();
  // Created first, so that every line below is logged through it (JSON on stdout).
  const app = await createApp(config);
  // Relative defaults (./data) follow the working directory: say where state really lives.
  const db = config.segment.database;
  Logger.log(
    `Segment ${config.segment.enabled ? `on ${db.type === 'sqlite' ? `sqlite:${resolve(db.path)}` : 'MySQL'}` : 'off'}; ` +
      `snowflake ${config.snowflake.enabled ? `${config.snowflake.zkAddress ? 'on ZooKeeper' : `embedded worker ID ${config.snowflake.workerId}`}, state in ${resolve(config.snowflake.stateDir)}` : 'off'}`,
    'Bootstrap',
  );
  if (
    (config.segment.enabled && db.type === 'sqlite') ||
    (config.snowflake.enabled && !config.snowflake.zkAddress)
  ) {
    Logger.warn(
      'Embedded configuration (SQLite file and/or a worker ID without ZooKeeper): one instance only. ' +
        'Production uses LEAF_DB_URL=mysql://... and LEAF_ZK_ADDRESS; with NODE_ENV=production the embedded defaults are refused.',
      'Bootstrap',
    );
  }
  await app.listen(config.port, config.host);
  // The bound port, not the configured one: PORT=0 picks a free port.
  const { port } = app.getHttpServer().address() as AddressInfo;
  Logger.log(`Leaf listening on http://${config.host}:${port}`, 'Bootstrap');
}

main().catch((error: unknown) => {
  // A refusal to start says what is wrong and exits non-zero, without a stack for known
  // causes. The stable code (e.g. LEAF_STARTUP_CLOCK_BEHIND) leads, for operators and scripts.
  const code =
    error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : null;
  const message =
    code !== null
      ? `[${code}] ${(error as Error).message}`
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  console.error(`Leaf failed to start: ${message}`);
  process.exit(1);
});
