import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

const SRC = __dirname;

/** Every entry file (`src/<entry>.ts` next to this spec), one program for all of them. */
let program: ts.Program | undefined;

function entryProgram(): ts.Program {
  program ??= ts.createProgram(
    ts.sys
      .readDirectory(SRC, ['.ts'], undefined, ['*.ts'])
      .filter((file) => !file.endsWith('.spec.ts')),
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

describe('the public API', () => {
  const root = exportedNames('index.ts');

  it('the package root exports what an application needs: at most 50 names', () => {
    expect(root.length).toBeGreaterThan(20);
    expect(root.length).toBeLessThanOrEqual(50);
  });

  it("the root carries none of the server application's helpers (they live in nestjs-leaf/internal)", () => {
    const internal = exportedNames('internal.ts');
    for (const name of ['ruleProblem', 'describeDefault', 'describeRange', 'LEAF_OPTION_RULES']) {
      expect(internal).toContain(name);
      expect(root).not.toContain(name);
    }
    expect(root).not.toContain('sequenceDatabaseProblem');
    expect(root).not.toContain('EmbeddedIdService');
  });

  it('every subpath of package.json "exports" has its entry file', () => {
    const manifest = JSON.parse(readFileSync(join(SRC, '..', 'package.json'), 'utf8')) as {
      exports: Record<string, string | { types: string }>;
    };
    const entries = Object.entries(manifest.exports)
      .filter(([, target]) => typeof target === 'object')
      .map(([, target]) =>
        (target as { types: string }).types.replace(/^\.\/dist\/|\.d\.ts$/g, ''),
      );
    expect(entries.sort()).toEqual(
      [
        'client',
        'client-nest',
        'errors',
        'formats',
        'gapless',
        'health',
        'http',
        'index',
        'internal',
        'journal',
        'numbers',
        'orm',
        'orm-prisma',
        'orm-typeorm',
        'otel',
        'ports',
        'testing',
        'typeorm',
      ].sort(),
    );
    for (const entry of entries) expect(exportedNames(`${entry}.ts`).length).toBeGreaterThan(0);
  });
});
