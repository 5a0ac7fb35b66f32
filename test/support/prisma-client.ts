/**
 * A Prisma 7 client generated at run time for a spec or a benchmark: the schema's models
 * with the `prisma-client` generator (TypeScript output, CommonJS, extensionless imports so
 * that ts-jest and ts-node load it as it is), written into a private directory under
 * `.prisma-test/` (gitignored: the generated client must resolve `@prisma/client` from the
 * repository's node_modules) and loaded with a dynamic import.
 *
 * `prisma generate` does not run the schema engine, but the CLI downloads it unless
 * `PRISMA_SCHEMA_ENGINE_BINARY` names one: `/bin/false` keeps generation offline.
 * `prisma migrate` and `db push` are never run: the specs create their tables with SQL.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const PRISMA_CLI = join(ROOT, 'node_modules', 'prisma', 'build', 'index.js');

/** A generated client: its module, and the directory to remove. */
export interface GeneratedPrismaClient<Client> {
  readonly dir: string;
  /** The generated `client.ts`'s `PrismaClient`, typed by the caller. */
  readonly PrismaClient: new (options: { adapter: unknown }) => Client;
  remove(): void;
}

/**
 * Generates the client of `models` (Prisma schema text) for `provider` and imports it.
 * @throws the CLI's error output when generation fails.
 */
export async function generatePrismaClient<Client>(
  provider: 'postgresql' | 'mysql',
  models: string,
): Promise<GeneratedPrismaClient<Client>> {
  const base = join(ROOT, '.prisma-test');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, `${provider}-`));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    const schema = join(dir, 'schema.prisma');
    writeFileSync(
      schema,
      [
        'generator client {',
        '  provider            = "prisma-client"',
        '  output              = "./client"',
        '  moduleFormat        = "cjs"',
        '  importFileExtension = ""',
        '}',
        '',
        `datasource db {\n  provider = "${provider}"\n}`,
        '',
        models,
      ].join('\n'),
    );
    await promisify(execFile)(process.execPath, [PRISMA_CLI, 'generate', '--schema', schema], {
      cwd: dir,
      env: {
        ...process.env,
        PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false',
        CHECKPOINT_DISABLE: '1',
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
      },
      timeout: 60_000,
    });
    const loaded = (await import(join(dir, 'client', 'client.ts'))) as {
      PrismaClient: GeneratedPrismaClient<Client>['PrismaClient'];
    };
    return { dir, PrismaClient: loaded.PrismaClient, remove };
  } catch (error) {
    remove();
    throw error;
  }
}
