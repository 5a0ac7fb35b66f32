import { describeWhen } from '../../support/services';
import { PostgresServer, postgresInstalled } from '../harness/postgres-server';

const POSTGRES_PACKAGE =
  'the PostgreSQL server package (initdb, postgres under /usr/lib/postgresql): the machine has it, or apt-get install postgresql';

/**
 * A spec block of scenarios on a private PostgreSQL server (started before, disposed after;
 * a fresh one per case, as each case restarts or pauses it). Without the server package it
 * fails in CI, else is skipped.
 */
export function describeOnPrivatePostgres(
  title: string,
  cases: Record<string, (server: PostgresServer) => Promise<void>>,
): void {
  describeWhen(postgresInstalled(), POSTGRES_PACKAGE, title, () => {
    let server: PostgresServer | undefined;

    beforeEach(async () => {
      server = await PostgresServer.start();
    });

    afterEach(async () => {
      await server?.dispose();
    });

    for (const [name, run] of Object.entries(cases)) it(name, () => run(server!));
  });
}
