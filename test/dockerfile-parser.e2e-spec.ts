/**
 * The Dockerfile reader behind test/deploy.e2e-spec.ts and the image's reproduction
 * (test/docker-image.image-spec.ts, `npm run test:image`): what it reads from our
 * Dockerfile, and that what it does not understand is refused rather than skipped — the
 * reproduction is only as faithful as this reader. Pure logic, no services.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copiesOf, dockerignore, parseDockerfile } from './support/dockerfile';
import { readImageRecipe, stageRuntime } from './support/image';

const DOCKERFILE = readFileSync(join(__dirname, '..', 'Dockerfile'), 'utf8');

describe('the Dockerfile reader', () => {
  it('reads the runtime stage of our Dockerfile', () => {
    const recipe = readImageRecipe(DOCKERFILE);
    expect(recipe.build.name).toBe('build');
    expect(recipe.nodeMajor).toBe(24);
    expect(recipe.workdir).toBe('/app');
    expect(recipe.user).toEqual({ uid: 1000, gid: 1000 });
    expect(recipe.volumes).toEqual(['/var/lib/leaf']);
    expect(recipe.env).toMatchObject({ NODE_ENV: 'production', LEAF_STATE_DIR: '/var/lib/leaf' });
    expect(recipe.cmd).toEqual(['node', 'dist/src/main.js']);
    expect(recipe.healthcheck.slice(0, 2)).toEqual(['node', '-e']);
    expect(recipe.stopSignal).toBe('SIGTERM');
    expect(copiesOf(recipe.runtime).map((copy) => copy.sources)).toContainEqual([
      '/app/libs/leaf/dist',
    ]);
  });

  it('joins continuation lines and drops comments inside them', () => {
    const [stage] = parseDockerfile('FROM node:24-trixie-slim\nRUN a \\\n# note\n && b\n');
    expect(stage.instructions).toEqual([{ keyword: 'RUN', args: 'a   && b' }]);
  });

  /** A minimal Dockerfile the reader accepts; each case below breaks one line of it. */
  const VALID = [
    'FROM node:24-trixie-slim AS build',
    'WORKDIR /app',
    'FROM node:24-trixie-slim',
    'WORKDIR /app',
    'COPY --from=build /app/dist ./dist',
    'ENV NODE_ENV=production',
    'USER 1000:1000',
    'HEALTHCHECK CMD ["node", "-e", "0"]',
    'CMD ["node", "dist/main.js"]',
  ].join('\n');
  const breaking = (from: string, to: string): string => {
    expect(VALID).toContain(from);
    return VALID.replace(from, to);
  };

  it('accepts the minimal Dockerfile the refusals start from', () => {
    expect(readImageRecipe(VALID)).toMatchObject({
      cmd: ['node', 'dist/main.js'],
      workdir: '/app',
    });
  });

  it.each([
    ['a COPY from an unknown stage', breaking('--from=build', '--from=builder')],
    ['two Node majors', breaking('node:24-trixie-slim AS', 'node:22-trixie-slim AS')],
    ['a named USER', breaking('USER 1000:1000', 'USER node')],
    ['a shell-form CMD', breaking('CMD ["node", "dist/main.js"]', 'CMD node dist/main.js')],
    ['a COPY wildcard', breaking('/app/dist ./dist', '/app/*.js ./')],
    ['an ENV substitution', breaking('NODE_ENV=production', 'NODE_ENV=$MODE')],
    ['a COPY --chown', breaking('--from=build', '--from=build --chown=1:1')],
    ['no HEALTHCHECK', breaking('HEALTHCHECK CMD ["node", "-e", "0"]', '')],
  ])('refuses %s', (_, text) => {
    expect(() => readImageRecipe(text)).toThrow();
  });

  it('refuses a runtime RUN it cannot reproduce', async () => {
    const recipe = readImageRecipe(
      breaking('WORKDIR /app\nCOPY', 'WORKDIR /app\nRUN apt-get install curl\nCOPY'),
    );
    const dir = mkdtempSync(join(tmpdir(), 'leaf-dockerfile-'));
    try {
      await expect(stageRuntime(recipe, dir, dir, [])).rejects.toThrow(
        /RUN apt-get install curl is not understood/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails, as docker build does, on a COPY --from source the build stage does not have', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leaf-dockerfile-'));
    try {
      await expect(stageRuntime(readImageRecipe(VALID), dir, dir, [])).rejects.toThrow(
        'COPY /app/dist: no such file in the source',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('applies .dockerignore as docker build does', () => {
    const ignored = dockerignore(readFileSync(join(__dirname, '..', '.dockerignore'), 'utf8'));
    for (const path of [
      'node_modules/x',
      'libs/leaf/node_modules/y',
      'libs/leaf/dist/index.js',
      'test/a.ts',
      '.git',
    ]) {
      expect([path, ignored(path)]).toEqual([path, true]);
    }
    for (const path of [
      'src/main.ts',
      'libs/leaf/src/index.ts',
      'migrations/x.ts',
      'package.json',
    ]) {
      expect([path, ignored(path)]).toEqual([path, false]);
    }
    const negated = dockerignore('docs\n!docs/keep.md\n*.log\n');
    expect([
      negated('docs/a.md'),
      negated('docs/keep.md'),
      negated('a.log'),
      negated('x/a.log'),
    ]).toEqual([true, false, true, false]);
  });
});
