/**
 * The README's error-code table (README, "Error codes") is the one place that lists every
 * code with its HTTP status and its remedy; every other document links to it. This spec
 * keeps it in step with the code: every code the library and the application answer with
 * has exactly one row, no row names a code that does not exist, and each library code's
 * status is the one the exception filter maps it to.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LeafErrorCode } from 'nestjs-leaf';
import { leafErrorStatus } from 'nestjs-leaf/errors';
import { RemoteLeafError } from 'nestjs-leaf/client';

const ROOT = join(__dirname, '..');

interface Row {
  readonly codes: string[];
  readonly status: string;
  readonly remedy: string;
}

/** The rows of the table under `## Error codes` in README.md. */
function readmeErrorRows(): Row[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = /^## Error codes\n([\s\S]*?)(?=^## )/m.exec(readme);
  if (!section) throw new Error('README.md has no "## Error codes" section');
  const lines = section[1].split('\n').filter((line) => line.startsWith('| `LEAF_'));
  return lines.map((line) => {
    const cells = line
      .slice(1, line.trimEnd().endsWith('|') ? line.trimEnd().length - 1 : undefined)
      .split(' | ')
      .map((cell) => cell.trim());
    if (cells.length !== 4) throw new Error(`not a four-column row: ${line}`);
    const codes = [...cells[0].matchAll(/`(LEAF_[A-Za-z0-9_<>]+)`/g)].map((match) => match[1]);
    return { codes, status: cells[1], remedy: cells[3] };
  });
}

/** Non-spec TypeScript files under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/**
 * Every code an answer can carry: the library's {@link LeafErrorCode} values, the literal
 * `code: 'LEAF_...'` of the application and of the library's HTTP layer (`LEAF_INTERNAL`,
 * `LEAF_HTTP_431`, ...), and `LEAF_HTTP_<status>` where the code is built from the status.
 */
function codesInCode(): Set<string> {
  const codes = new Set<string>(Object.values(LeafErrorCode));
  for (const file of [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'libs/leaf/src'))]) {
    const text = readFileSync(file, 'utf8');
    for (const [, code] of text.matchAll(/code: '(LEAF_[A-Z0-9_]+)'/g)) codes.add(code);
    if (text.includes('code: `LEAF_HTTP_${')) codes.add('LEAF_HTTP_<status>');
  }
  return codes;
}

describe('the README error-code table', () => {
  const rows = readmeErrorRows();
  const documented = rows.flatMap((row) => row.codes);

  it('lists every code of the code exactly once, and no other', () => {
    const inCode = [...codesInCode()].sort();
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual(inCode);
  });

  it('gives each library code the status the exception filter answers with', () => {
    for (const row of rows) {
      for (const code of row.codes) {
        if (!(Object.values(LeafErrorCode) as string[]).includes(code)) continue;
        const status = leafErrorStatus(new RemoteLeafError(code as LeafErrorCode, code, 0));
        expect({ code, status: Number(/^\d{3}/.exec(row.status)?.[0]) }).toEqual({ code, status });
      }
    }
  });

  it('gives LEAF_HTTP_<n> the status n, and every row a remedy', () => {
    for (const row of rows) {
      const statuses = row.status.match(/\d{3}/g) ?? [];
      row.codes
        .map((code) => /^LEAF_HTTP_(\d{3})$/.exec(code)?.[1])
        .filter((status): status is string => status !== undefined)
        .forEach((status) => expect(statuses).toContain(status));
      expect(row.remedy).toMatch(/\w{3}/);
    }
  });
});
