import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

const SRC = __dirname;

interface Manifest {
  exports: Record<string, string | { types: string; default: string }>;
  typesVersions: Record<string, Record<string, string[]>>;
}

const manifest = JSON.parse(readFileSync(join(SRC, '..', 'package.json'), 'utf8')) as Manifest;

/** Subpath (`.`, `./client/nest`) → its entry file under src/ (`index.ts`, `client/nest.ts`). */
const ENTRIES = Object.entries(manifest.exports)
  .filter(([, target]) => typeof target === 'object')
  .map(([subpath, target]) => ({
    subpath,
    file: `${(target as { types: string }).types.replace(/^\.\/dist\/|\.d\.ts$/g, '')}.ts`,
  }));

/** Every entry file, one program for all of them. */
let program: ts.Program | undefined;

function entryProgram(): ts.Program {
  program ??= ts.createProgram(
    ENTRIES.map(({ file }) => join(SRC, file)),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      skipLibCheck: true,
      noEmit: true,
    },
  );
  return program;
}

/** The names an entry file exports, as its declaration file will (types and values). */
function exportedNames(entry: string): string[] {
  const entries = entryProgram();
  const checker = entries.getTypeChecker();
  const source = entries.getSourceFile(join(SRC, entry));
  if (!source) throw new Error(`no entry file ${entry}`);
  const module = checker.getSymbolAtLocation(source)!;
  return checker.getExportsOfModule(module).map((symbol) => symbol.getName());
}

/**
 * How many names each entry exports: a new name is a decision (this table changes with it),
 * and an entry that grows past its purpose shows here first.
 */
const ENTRY_SIZES: Record<string, number> = {
  '.': 48,
  './errors': 53,
  './formats': 56,
  './numbers': 10,
  './gapless': 26,
  './journal': 10,
  './health': 4,
  './http': 11,
  './otel': 5,
  './client': 53,
  './client/nest': 60,
  './orm/typeorm': 11,
  './orm/prisma': 3,
  './orm/sync': 5,
  './storage/typeorm': 29,
  './ports': 48,
  './testing': 32,
  './server': 36,
};

describe('the public API', () => {
  const root = exportedNames('index.ts');

  it('the package root exports what an application needs: at most 50 names', () => {
    expect(root.length).toBeGreaterThan(20);
    expect(root.length).toBeLessThanOrEqual(50);
  });

  it("the root carries none of the server's helpers (they live in nestjs-leaf/server) and no TypeORM table", () => {
    const server = exportedNames('server.ts');
    for (const name of ['ruleProblem', 'describeDefault', 'describeRange', 'LEAF_OPTION_RULES']) {
      expect(server).toContain(name);
      expect(root).not.toContain(name);
    }
    for (const name of [
      'sequenceDatabaseProblem',
      'EmbeddedIdService',
      'LEAF_MIGRATIONS',
      'LeafAllocEntity',
    ])
      expect(root).not.toContain(name);
  });

  it('each subpath of package.json "exports" is its own file: dist/<subpath>, src/<subpath>.ts', () => {
    for (const { subpath, file } of ENTRIES) {
      expect(file).toBe(subpath === '.' ? 'index.ts' : `${subpath.slice(2)}.ts`);
      expect(manifest.exports[subpath]).toEqual({
        types: `./dist/${file.replace(/\.ts$/, '.d.ts')}`,
        default: `./dist/${file.replace(/\.ts$/, '.js')}`,
      });
    }
  });

  it('typesVersions lists every subpath of "exports", and nothing else', () => {
    expect(manifest.typesVersions['*']).toEqual(
      Object.fromEntries(
        ENTRIES.filter(({ subpath }) => subpath !== '.').map(({ subpath, file }) => [
          subpath.slice(2),
          [`./dist/${file.replace(/\.ts$/, '.d.ts')}`],
        ]),
      ),
    );
  });

  it('counts the names of each entry', () => {
    const sizes = Object.fromEntries(
      ENTRIES.map(({ subpath, file }) => [subpath, exportedNames(file).length]),
    );
    expect(sizes).toEqual(ENTRY_SIZES);
  });
});
