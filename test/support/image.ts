/**
 * The Docker image without a container engine (test/docker-image.image-spec.ts): its file
 * tree assembled from the Dockerfile's instructions, and its commands run in a sandbox that
 * stands for the container.
 *
 * Staging ({@link stageImage}), instruction by instruction, in a temp directory:
 * - build stage: COPY from the build context (this checkout, minus .dockerignore) into the
 *   stage's WORKDIR; every RUN literally (`sh -c`, as root, in that directory) except two
 *   substitutions: the apt-get line (compilers: the machine's own) and `npm ci` (the
 *   checkout's node_modules, which CI's `npm ci` installed from the same package-lock.json
 *   with the Node that runs the test, native addons included);
 * - runtime stage: WORKDIR, `COPY --from=<build stage>` (hard links into the build stage's
 *   tree: same content, no second copy), the RUN that creates the volume directory for the
 *   USER (the only RUN understood there), ENV, USER, VOLUME, HEALTHCHECK, STOPSIGNAL, CMD.
 *   The base image contributes /usr/local/bin/node (the test's own Node binary, which must
 *   be of the image's major) and PATH.
 *
 * The sandbox ({@link ContainerProcess}): a private mount namespace (`unshare --mount`) in
 * which the staged tree becomes the root (`chroot`): the host's /usr and /etc read-only
 * (standing for the base image's Debian), /dev, /proc, /sys, the declared volumes bound
 * read-write at their image paths, then the root remounted read-only; the command runs as
 * the manifest's uid/gid (`setpriv`, no capabilities, no_new_privs) from WORKDIR with exactly
 * the container's environment. Paths are the image's own: /app, /var/lib/leaf, /tmp.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
} from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import {
  copiesOf,
  dockerignore,
  envOf,
  execForm,
  healthcheckOf,
  last,
  only,
  parseDockerfile,
  userOf,
  volumesOf,
  workdirOf,
  type Stage,
} from './dockerfile';

/** What the runtime stage declares, read from the Dockerfile. */
export interface ImageRecipe {
  readonly stages: Stage[];
  /** The stage the runtime stage copies from. */
  readonly build: Stage;
  readonly runtime: Stage;
  /** Node major of the base images (`node:24-trixie-slim` → 24). */
  readonly nodeMajor: number;
  readonly env: Record<string, string>;
  readonly workdir: string;
  readonly user: { uid: number; gid: number };
  readonly volumes: string[];
  readonly cmd: string[];
  readonly healthcheck: string[];
  readonly stopSignal: NodeJS.Signals;
}

/** The PATH of the Debian-based node images (no ENV PATH in our Dockerfile changes it). */
export const BASE_IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export function readImageRecipe(dockerfile: string): ImageRecipe {
  const stages = parseDockerfile(dockerfile);
  const runtime = stages[stages.length - 1];
  const fromNames = new Set(copiesOf(runtime).flatMap((copy) => (copy.from ? [copy.from] : [])));
  if (fromNames.size !== 1)
    throw new Error(`runtime stage copies from ${[...fromNames]}, not one stage`);
  const [buildName] = fromNames;
  const build = stages.find((stage) => stage.name === buildName);
  if (!build) throw new Error(`COPY --from=${buildName}: no stage of that name`);
  const majors = new Set(stages.map((stage) => /^node:(\d+)-/.exec(stage.from)?.[1]));
  if (majors.size !== 1 || majors.has(undefined)) {
    throw new Error(`base images ${stages.map((s) => s.from)}: not one node:<major>-… line`);
  }
  return {
    stages,
    build,
    runtime,
    nodeMajor: Number([...majors][0]),
    env: envOf(runtime),
    workdir: workdirOf(runtime),
    user: userOf(runtime),
    volumes: volumesOf(runtime),
    cmd: execForm(last(runtime, 'CMD').args),
    healthcheck: healthcheckOf(runtime).command,
    stopSignal: (only(runtime, 'STOPSIGNAL').pop()?.args ?? 'SIGTERM') as NodeJS.Signals,
  };
}

/** Runs `file args` and resolves with its output; rejects with both outputs on failure. */
function run(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { ...options, timeout: options.timeoutMs ?? 300_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`${file} ${args.join(' ')}: ${error.message}\n${stdout}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** `path` of a stage (absolute, or relative to its WORKDIR) inside the directory standing for it. */
function inStage(root: string, workdir: string, path: string): string {
  return join(root, posix.isAbsolute(path) ? path : posix.join(workdir, path));
}

/**
 * COPY semantics: a directory's contents go into `dest`; a file goes into `dest` when it ends
 * with `/` (or there are several sources), else becomes `dest`. `filter` drops context paths
 * (.dockerignore). `link` hard-links instead of copying. A missing source fails, as in
 * `docker build`.
 */
async function copy(
  sources: { host: string; rel: string }[],
  destHost: string,
  destIsDir: boolean,
  options: { filter?: (rel: string) => boolean; link?: boolean },
): Promise<void> {
  for (const source of sources) {
    if (!existsSync(source.host)) throw new Error(`COPY ${source.rel}: no such file in the source`);
    if (options.filter?.(source.rel))
      throw new Error(`COPY ${source.rel}: excluded by .dockerignore`);
    const isDir = lstatSync(source.host).isDirectory();
    const target = isDir || !destIsDir ? destHost : join(destHost, posix.basename(source.rel));
    mkdirSync(isDir ? target : dirname(target), { recursive: true });
    if (isDir && options.filter) {
      await copyFiltered(source.host, source.rel, target, options.filter);
    } else {
      await run('cp', [
        options.link ? '-al' : '-a',
        isDir ? `${source.host}/.` : source.host,
        target,
      ]);
    }
  }
}

/** A directory of the build context, minus what `excluded` drops (relative paths). */
async function copyFiltered(
  dir: string,
  rel: string,
  target: string,
  excluded: (rel: string) => boolean,
): Promise<void> {
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const childRel = posix.join(rel, entry.name);
    if (excluded(childRel)) continue;
    const host = join(dir, entry.name);
    if (entry.isDirectory()) await copyFiltered(host, childRel, join(target, entry.name), excluded);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(host), join(target, entry.name));
    else await run('cp', ['-a', host, join(target, entry.name)]);
  }
}

/** One line per step: how the staging reproduced each instruction (for the test's log). */
export type StagingLog = string[];

/** A RUN of the build stage this staging does not execute, and what stands for it. */
interface Substitution {
  readonly run: RegExp;
  readonly note: string;
  readonly apply?: (workdirHost: string, context: string) => Promise<void>;
}

const BUILD_SUBSTITUTIONS: Substitution[] = [
  {
    run: /^apt-get update && apt-get install -y --no-install-recommends [a-z0-9+ .-]+ && rm -rf \/var\/lib\/apt\/lists\/\*$/,
    note: 'skipped: the compilers of this machine built the addons of the checkout',
  },
  {
    run: /^npm ci( --[a-z-]+)*$/,
    note: "substituted: the checkout's node_modules (npm ci of the same package-lock.json, by this Node)",
    apply: async (workdirHost, context) => {
      expectInstalledFromLock(context);
      await run('cp', ['-a', join(context, 'node_modules'), join(workdirHost, 'node_modules')]);
    },
  },
];

/**
 * The checkout's node_modules was installed from its package-lock.json (npm's record of
 * the installed tree, node_modules/.package-lock.json, names the same versions): a stale
 * tree must not stand in for `npm ci`.
 */
function expectInstalledFromLock(context: string): void {
  type Lock = { packages: Record<string, { version?: string; optional?: boolean }> };
  const lock = JSON.parse(readFileSync(join(context, 'package-lock.json'), 'utf8')) as Lock;
  const installedPath = join(context, 'node_modules', '.package-lock.json');
  if (!existsSync(installedPath))
    throw new Error('node_modules was not installed by npm: run npm ci');
  const installed = JSON.parse(readFileSync(installedPath, 'utf8')) as Lock;
  const stale: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.startsWith('node_modules/') || entry.optional) continue;
    if (installed.packages[path]?.version !== entry.version) stale.push(path);
  }
  if (stale.length > 0) {
    throw new Error(
      `node_modules differs from package-lock.json (${stale.slice(0, 5)}…): run npm ci`,
    );
  }
}

/** The image's files, staged: `rootfs` is what the runtime stage adds to the base image. */
export interface StagedImage {
  readonly recipe: ImageRecipe;
  readonly rootfs: string;
  readonly log: StagingLog;
}

/**
 * The build stage, reproduced in `dir`/build from the checkout at `context`. Returns the
 * directory standing for the stage's file system root.
 */
export async function stageBuild(
  recipe: ImageRecipe,
  context: string,
  dir: string,
  log: StagingLog,
): Promise<string> {
  const root = join(dir, 'build');
  mkdirSync(root, { recursive: true });
  const ignored = dockerignore(
    existsSync(join(context, '.dockerignore'))
      ? readFileSync(join(context, '.dockerignore'), 'utf8')
      : '',
  );
  let workdir = '/';
  const env: Record<string, string> = {};
  for (const { keyword, args } of recipe.build.instructions) {
    if (keyword === 'WORKDIR') {
      workdir = posix.isAbsolute(args) ? args : posix.join(workdir, args);
      mkdirSync(inStage(root, workdir, '.'), { recursive: true });
    } else if (keyword === 'ENV') {
      Object.assign(env, envOf({ from: '', name: null, instructions: [{ keyword, args }] }));
    } else if (keyword === 'COPY') {
      const [{ from, sources, dest }] = copiesOf({
        from: '',
        name: null,
        instructions: [{ keyword, args }],
      });
      if (from) throw new Error(`build stage: COPY --from=${from} is not understood here`);
      await copy(
        sources.map((rel) => ({ host: join(context, rel), rel: posix.normalize(rel) })),
        inStage(root, workdir, dest),
        dest.endsWith('/') || sources.length > 1,
        { filter: ignored },
      );
      log.push(`build: COPY ${args} (from the checkout, .dockerignore applied)`);
    } else if (keyword === 'RUN') {
      const substitution = BUILD_SUBSTITUTIONS.find((s) => s.run.test(args.replace(/\s+/g, ' ')));
      if (substitution) {
        await substitution.apply?.(inStage(root, workdir, '.'), context);
        log.push(`build: RUN ${args} — ${substitution.note}`);
      } else {
        const started = Date.now();
        await run('sh', ['-c', args], {
          cwd: inStage(root, workdir, '.'),
          env: { ...process.env, ...env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
        });
        log.push(
          `build: RUN ${args} — literally (${((Date.now() - started) / 1000).toFixed(1)} s)`,
        );
      }
    } else {
      throw new Error(`build stage: ${keyword} is not understood here`);
    }
  }
  return root;
}

/** The directories the sandbox mounts over (the merged-/usr layout of Debian). */
const BASE_DIRS = ['usr', 'etc', 'dev', 'proc', 'sys', 'tmp'];
const BASE_LINKS: Record<string, string> = {
  bin: 'usr/bin',
  sbin: 'usr/sbin',
  lib: 'usr/lib',
  lib64: 'usr/lib64',
};

/**
 * The runtime stage in `dir`/`name` from the build stage's tree `buildRoot`: the image's
 * file system minus the base image's (which the sandbox lends from this machine).
 */
export async function stageRuntime(
  recipe: ImageRecipe,
  buildRoot: string,
  dir: string,
  log: StagingLog,
  name = 'rootfs',
): Promise<StagedImage> {
  const rootfs = join(dir, name);
  mkdirSync(rootfs, { recursive: true });
  chmodSync(rootfs, 0o755);
  for (const base of BASE_DIRS) mkdirSync(join(rootfs, base), { recursive: true });
  chmodSync(join(rootfs, 'tmp'), 0o1777);
  for (const [link, target] of Object.entries(BASE_LINKS)) symlinkSync(target, join(rootfs, link));
  let workdir = '/';
  for (const { keyword, args } of recipe.runtime.instructions) {
    if (keyword === 'WORKDIR') {
      workdir = posix.isAbsolute(args) ? args : posix.join(workdir, args);
      mkdirSync(inStage(rootfs, workdir, '.'), { recursive: true });
    } else if (keyword === 'COPY') {
      const [{ from, sources, dest }] = copiesOf({
        from: '',
        name: null,
        instructions: [{ keyword, args }],
      });
      if (from !== recipe.build.name)
        throw new Error(`runtime stage: COPY ${args}: not from the build stage`);
      await copy(
        sources.map((source) => ({ host: inStage(buildRoot, '/', source), rel: source })),
        inStage(rootfs, workdir, dest),
        dest.endsWith('/') || sources.length > 1,
        { link: true },
      );
      log.push(`runtime: COPY ${args}`);
    } else if (keyword === 'RUN') {
      // `mkdir -p <dir> && chown <uid>:<gid> <dir>`: the volume's directory for the user.
      const match = /^mkdir -p (\/\S+) && chown (\d+):(\d+) \1$/.exec(args);
      if (!match) throw new Error(`runtime stage: RUN ${args} is not understood here`);
      const path = join(rootfs, match[1]);
      mkdirSync(path, { recursive: true });
      chownSync(path, Number(match[2]), Number(match[3]));
      log.push(`runtime: RUN ${args} — literally, in the staged tree`);
    } else if (
      !['ENV', 'USER', 'VOLUME', 'EXPOSE', 'HEALTHCHECK', 'STOPSIGNAL', 'CMD'].includes(keyword)
    ) {
      throw new Error(`runtime stage: ${keyword} is not understood here`);
    }
  }
  return { recipe, rootfs, log };
}

/** Every path below `dir` (relative) that `uid` could write to by its permission bits. */
export function writableBy(dir: string, uid: number, gid: number): string[] {
  const found: string[] = [];
  const walk = (path: string): void => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    const mode = stat.mode;
    const writable =
      (stat.uid === uid && mode & 0o200) || (stat.gid === gid && mode & 0o020) || mode & 0o002;
    if (writable) found.push(relative(dir, path) || '.');
    if (stat.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
  };
  walk(dir);
  return found;
}

/** A bind mount into the sandbox: `source` on this machine at `target` in the image. */
export interface Mount {
  readonly source: string;
  readonly target: string;
}

/** How a container process is run: the Kubernetes securityContext's terms. */
export interface ContainerSpec {
  readonly rootfs: string;
  readonly argv: readonly string[];
  readonly env: Record<string, string>;
  readonly workdir: string;
  readonly uid: number;
  readonly gid: number;
  /** Supplementary groups (the pod's fsGroup); none when empty. */
  readonly groups: readonly number[];
  readonly readOnlyRootFilesystem: boolean;
  readonly mounts: readonly Mount[];
}

/**
 * The sandbox's set-up, run by `sh` in the new mount namespace (nothing leaks to the
 * machine's: propagation private). $1 rootfs, $2 node binary, $3 read-only root (1/0),
 * then `source:target` mounts up to `--`, then the chroot'ed command.
 */
const SANDBOX_SCRIPT = `
set -eu
R=$1 NODE=$2 RO=$3; shift 3
mount --bind "$R" "$R"
mount --rbind /usr "$R/usr"; mount -o remount,bind,ro "$R/usr"
mount -t tmpfs -o mode=0755,size=64k base-usr-local "$R/usr/local"
mkdir -p "$R/usr/local/bin"; : > "$R/usr/local/bin/node"
mount --bind "$NODE" "$R/usr/local/bin/node"; mount -o remount,bind,ro "$R/usr/local/bin/node"
mount -o remount,ro "$R/usr/local"
mount --rbind /etc "$R/etc"; mount -o remount,bind,ro "$R/etc"
mount --rbind /dev "$R/dev"; mount --rbind /proc "$R/proc"; mount --rbind /sys "$R/sys"
while [ "$1" != -- ]; do
  mount --bind "\${1%%:*}" "$R\${1#*:}"; shift
done
shift
[ "$RO" = 1 ] && mount -o remount,bind,ro "$R"
exec "$@"
`;

/** `unshare` arguments that run `spec` in the sandbox (see the top of this file). */
export function sandboxArgs(spec: ContainerSpec): string[] {
  const groups =
    spec.groups.length > 0 ? [`--groups=${spec.groups.join(',')}`] : ['--clear-groups'];
  return [
    '--mount',
    '--propagation',
    'private',
    '--',
    '/bin/sh',
    '-c',
    SANDBOX_SCRIPT,
    'sandbox',
    spec.rootfs,
    process.execPath,
    spec.readOnlyRootFilesystem ? '1' : '0',
    ...spec.mounts.map((mount) => `${mount.source}:${mount.target}`),
    '--',
    'chroot',
    spec.rootfs,
    'setpriv',
    `--reuid=${spec.uid}`,
    `--regid=${spec.gid}`,
    ...groups,
    '--no-new-privs',
    '--inh-caps=-all',
    '--bounding-set=-all',
    'env',
    '-i',
    ...Object.entries(spec.env).map(([name, value]) => `${name}=${value}`),
    'env',
    `--chdir=${spec.workdir}`,
    ...spec.argv,
  ];
}

/** How a container process ended. */
export interface ContainerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly durationMs: number;
}

/** A process in the sandbox: output collected; killed (SIGKILL) after `timeoutMs`. */
export class ContainerProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<ContainerExit>;
  private readonly child: ChildProcess;
  private alive = true;

  constructor(spec: ContainerSpec, timeoutMs: number) {
    const startedAt = Date.now();
    // The sandbox's set-up finds mount, chroot, setpriv on the image's PATH (this machine's /usr).
    this.child = spawn('unshare', sandboxArgs(spec), {
      env: { PATH: BASE_IMAGE_PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.child.kill('SIGKILL');
    }, timeoutMs);
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        clearTimeout(timer);
        this.alive = false;
        resolve({
          code,
          signal,
          stdout: this.stdout,
          stderr: this.stderr,
          timedOut,
          durationMs: Date.now() - startedAt,
        });
      });
    });
  }

  /** Runs `spec` to its end. */
  static run(spec: ContainerSpec, timeoutMs = 60_000): Promise<ContainerExit> {
    return new ContainerProcess(spec, timeoutMs).exited;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The sandbox's set-up execs, so this is the command's own process (as PID 1 is in a container). */
  signal(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  kill(): Promise<ContainerExit> {
    this.signal('SIGKILL');
    return this.exited;
  }
}
