/**
 * The library as a user receives it: built with its own tsconfig, packed with `npm pack`
 * (so `files` and `exports` of libs/leaf/package.json decide what ships), and extracted into
 * a directory's node_modules/nestjs-leaf — no registry, no full `npm install`.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newestSource } from './app-process';

const ROOT = join(__dirname, '..', '..');
const LIBRARY = join(ROOT, 'libs', 'leaf');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let packed: string | null = null;
const workDirs: string[] = [];

/** A fresh temp directory, removed by {@link removePackedDirs}. */
export function packedTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  workDirs.push(dir);
  return dir;
}

/**
 * True when libs/leaf/dist is the output of `npm run build:lib` for the sources as they are:
 * newer than every source file and build configuration. (That build empties dist first, so
 * nothing of older sources remains in it.)
 */
function libraryBuildFresh(): boolean {
  const index = join(LIBRARY, 'dist', 'index.js');
  if (!existsSync(index)) return false;
  const inputs = [
    newestSource(join(LIBRARY, 'src')),
    ...[join(LIBRARY, 'tsconfig.build.json'), join(ROOT, 'tsconfig.json')].map(
      (file) => statSync(file).mtimeMs,
    ),
  ];
  return statSync(index).mtimeMs > Math.max(...inputs);
}

/**
 * Puts the library's build into a staging copy of its package and packs it; returns the
 * tarball's path. Once per test file. The build is libs/leaf/dist when it is fresh (see
 * {@link libraryBuildFresh}; CI builds before testing), else the same compilation into the
 * stage (libs/leaf/dist is left alone).
 */
export function packLibrary(): string {
  if (packed !== null) return packed;
  const stage = packedTempDir('leaf-pack-');
  if (libraryBuildFresh()) {
    cpSync(join(LIBRARY, 'dist'), join(stage, 'dist'), { recursive: true });
  } else {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    execFileSync(
      process.execPath,
      [tsc, '-p', join(LIBRARY, 'tsconfig.build.json'), '--outDir', join(stage, 'dist')],
      { cwd: LIBRARY, stdio: 'pipe' },
    );
  }
  for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) {
    copyFileSync(join(LIBRARY, file), join(stage, file));
  }
  const out = execFileSync(
    NPM,
    ['pack', '--json', '--ignore-scripts', '--pack-destination', stage],
    {
      cwd: stage,
      encoding: 'utf8',
    },
  );
  const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>;
  packed = join(stage, filename);
  return packed;
}

/** Extracts the tarball into `<dir>/node_modules/nestjs-leaf`, as `npm install <tgz>` would. */
export function installPacked(tarball: string, dir: string): void {
  const target = join(dir, 'node_modules', 'nestjs-leaf');
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
}

/**
 * Links packages of the repository's node_modules into `<dir>/node_modules`: all of them but
 * nestjs-leaf (the workspace link) when `only` is left out, else just `only`. One copy of
 * @nestjs/* and typeorm, shared by the fixture and the packed library.
 */
export function linkRootPackages(dir: string, only?: readonly string[]): void {
  const modules = join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  const link = (name: string) => {
    if (name.includes('/')) mkdirSync(join(modules, name.split('/')[0]), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(modules, name), 'dir');
  };
  if (only) {
    only.forEach(link);
    return;
  }
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry.startsWith('.') || entry === 'nestjs-leaf') continue;
    if (entry.startsWith('@')) {
      for (const scoped of readdirSync(join(ROOT, 'node_modules', entry)))
        link(`${entry}/${scoped}`);
    } else {
      link(entry);
    }
  }
}

/** Removes every directory made here. */
export function removePackedDirs(): void {
  for (const dir of workDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  packed = null;
}

export { ROOT };
