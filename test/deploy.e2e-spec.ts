/**
 * The deployment files against what the application really reads and serves (issue "Run it
 * in production", item 7). No Docker engine and no Kubernetes cluster run here, so the
 * Dockerfile, docker-compose.yml and deploy/k8s/*.yaml are parsed and checked:
 *
 * - every environment variable they give the application is one it reads
 *   (`APP_ENV_VARS`, itself checked against src/config/app-config.ts), and the resulting
 *   environment is accepted by `loadAppConfig` with NODE_ENV=production;
 * - probe and health-check paths are routes of src/health/health.controller.ts; probe ports,
 *   container ports, EXPOSE and advertised ports all equal PORT;
 * - the start-up allowance of every probe covers LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS;
 *   termination grace exceeds the preStop delay;
 * - the snowflake identity is stable and unique per instance (the pod's DNS name under the
 *   headless Service; one per compose service) and LEAF_STATE_DIR is on a per-instance volume;
 * - the Dockerfile: a maintained Node LTS line on Debian (not Alpine), multi-stage, non-root,
 *   NODE_ENV=production, HEALTHCHECK on /health/ready, and the scripts it runs exist after
 *   `npm run build` (the migration command and the TypeORM CLI's data source, migrations/,
 *   included);
 * - the migration job (compose and Kubernetes) is given only the database settings, which
 *   the migration command accepts on their own (`loadDatabaseConfig`);
 * - the PostgreSQL variants (docker-compose.postgres.yml, the deploy/k8s-postgres overlay)
 *   pass the same checks with PostgreSQL, and differ from the MariaDB ones in the database
 *   only.
 *
 * The health-check command of the Dockerfile and compose file is also run for real against
 * the application (embedded configuration, no services needed).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { loadAppConfig, type AppConfig } from '../src/config/app-config';
import { APP_ENV_VARS } from '../src/config/app-env';
import { effectiveLeafOptions } from '../src/config/leaf-options.mapping';
import { DATABASE_ENV_VARS, loadDatabaseConfig } from '../src/config/database-config';
import { tempDir } from './support/app';
import { AppProcess, killAllAppProcesses } from './support/app-process';
import { envOf, healthcheckOf, only, parseDockerfile } from './support/dockerfile';
import { isCi } from './support/services';

const ROOT = join(__dirname, '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const APP_VARS = new Set<string>(APP_ENV_VARS);

// ---------------------------------------------------------------------------------------
// What the application reads and serves, from its source.

/** Every variable `loadAppConfig` looks up in the environment it is given. */
function varsReadByAppConfig(): Set<string> {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_target, name) => {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  loadAppConfig(env);
  return read;
}

/** `/health/live`, `/health/ready`: the @Controller prefix joined with each @Get path. */
function healthRoutes(): Set<string> {
  const source = read('src/health/health.controller.ts');
  const prefix = /@Controller\(\s*'([^']*)'\s*\)/.exec(source)?.[1] ?? '';
  const routes = [...source.matchAll(/@Get\(\s*'([^']*)'\s*\)/g)].map((m) =>
    `/${[prefix, m[1]].filter((part) => part !== '').join('/')}`.replace(/\/+/g, '/'),
  );
  return new Set(routes);
}

/** Where `npm run build` puts the compiled form of `src/<path>.ts` (tsconfig.build.json). */
function compiledPath(sourcePath: string): string {
  const build = JSON.parse(read('tsconfig.build.json')) as {
    compilerOptions: { rootDir: string; outDir: string };
  };
  expect(build.compilerOptions).toMatchObject({ rootDir: '.', outDir: './dist' });
  return join('dist', sourcePath.replace(/\.ts$/, '.js'));
}

/**
 * `dist/src/x.js` (or `dist/migrations/x.js`) back to its `.ts` source, which must exist; in
 * CI (built first) the output too.
 */
function expectBuiltScript(script: string): void {
  const match = /^dist\/((?:src|migrations)\/.+)\.js$/.exec(script);
  expect(match).not.toBeNull();
  const source = `${match![1]}.ts`;
  expect(existsSync(join(ROOT, source))).toBe(true);
  expect(compiledPath(source)).toBe(script);
  if (isCi() || existsSync(join(ROOT, 'dist', 'src'))) {
    if (!existsSync(join(ROOT, script))) {
      throw new Error(`${script} is missing: run \`npm run build\` first (.ci/run does)`);
    }
  }
}

const SERVED = healthRoutes();
const MIGRATE_SCRIPT = 'dist/src/database/migrate.js';
/** The TypeORM CLI's data source (`npx typeorm migration:run -d …`), built from migrations/. */
const CLI_DATA_SOURCE = 'dist/migrations/data-source.js';
const MAIN_SCRIPT = 'dist/src/main.js';

/** The configuration the application derives from `env` (throws when it would refuse to start). */
function configOf(env: Record<string, string>): AppConfig {
  for (const name of Object.keys(env)) expect([name, APP_VARS.has(name)]).toEqual([name, true]);
  return loadAppConfig(env);
}

const PRODUCTION_DEFAULTS = loadAppConfig({
  NODE_ENV: 'production',
  LEAF_DB_URL: 'mysql://u:p@db:3306/leaf',
  LEAF_ZK_ADDRESS: 'zk:2181',
});

/** `--start-period=120s` / `120s` / `2m` / `1m30s` in seconds. */
function durationSeconds(value: string): number {
  let seconds = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+(?:\.\d+)?)(h|m|s|ms)/g)) {
    seconds += Number(amount) * { h: 3600, m: 60, s: 1, ms: 0.001 }[unit as 'h' | 'm' | 's' | 'ms'];
  }
  return seconds;
}

/** Seconds the application may take before it listens: snowflake start-up wait + ZooKeeper connect. */
function startupSeconds(config: AppConfig): number {
  const snowflake = effectiveLeafOptions(config).snowflake!;
  const zk = snowflake.workerSource.kind === 'zookeeper' ? snowflake.workerSource : null;
  return (snowflake.startupMaxWaitMs + (zk?.connectTimeoutMs ?? 0)) / 1000;
}

/** Where the state file lives for `config` (the library's default unless LEAF_STATE_DIR). */
function stateDirOf(config: AppConfig): string {
  return effectiveLeafOptions(config).snowflake!.stateDir;
}

describe('the application’s own lists', () => {
  it('APP_ENV_VARS is exactly what loadAppConfig reads', () => {
    expect([...varsReadByAppConfig()].sort()).toEqual([...APP_ENV_VARS].sort());
  });

  it('the health controller serves /health/live and /health/ready', () => {
    expect([...SERVED]).toEqual(expect.arrayContaining(['/health/live', '/health/ready']));
  });
});

// ---------------------------------------------------------------------------------------
// Dockerfile

describe('Dockerfile', () => {
  const stages = parseDockerfile(read('Dockerfile'));
  const runtime = stages[stages.length - 1];
  const runtimeEnv = envOf(runtime);

  it('builds in stages on one maintained Node LTS line, on the current Debian (trixie, glibc), not Alpine', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const { from } of stages) {
      const match = /^node:(\d+)-trixie-slim$/.exec(from);
      expect([from, match !== null]).toEqual([from, true]);
      const major = Number(match![1]);
      // LTS lines are the even majors; 20 reached its end of life in April 2026.
      expect(major % 2).toBe(0);
      expect(major).toBeGreaterThanOrEqual(22);
      expect(from).not.toMatch(/alpine/);
    }
    // Native addons are copied from the build stage: same Node ABI, same glibc.
    expect(new Set(stages.map((stage) => stage.from)).size).toBe(1);
  });

  it('has the compilers for node-gyp (zookeeper) in the build stage only', () => {
    const build = stages[0];
    const runs = only(build, 'RUN')
      .map((run) => run.args)
      .join('\n');
    for (const tool of ['python3', 'make', 'g++']) expect(runs).toContain(tool);
    expect(runs).toMatch(/npm ci\b/);
    expect(runs).toMatch(/npm run build\b/);
    expect(runs).toMatch(/npm prune --omit=dev\b/);
    expect(
      only(runtime, 'RUN')
        .map((run) => run.args)
        .join('\n'),
    ).not.toMatch(/apt-get|npm (ci|install)/);
  });

  it('runs as a non-root user with NODE_ENV=production', () => {
    const users = only(runtime, 'USER');
    expect(users).toHaveLength(1);
    const [user, group] = users[0].args.split(':');
    expect(['root', '0']).not.toContain(user);
    expect(['root', '0']).not.toContain(group ?? user);
    expect(runtimeEnv.NODE_ENV).toBe('production');
    for (const name of Object.keys(runtimeEnv)) expect(APP_VARS.has(name)).toBe(true);
  });

  it('exposes PORT and keeps LEAF_STATE_DIR on a volume the service user owns', () => {
    const config = configOf({
      ...runtimeEnv,
      LEAF_DB_URL: 'mysql://u:p@db:3306/leaf',
      LEAF_ZK_ADDRESS: 'zk:2181',
    });
    expect(only(runtime, 'EXPOSE').map((e) => e.args)).toEqual([String(config.port)]);
    const volumes = only(runtime, 'VOLUME').flatMap((v) => JSON.parse(v.args) as string[]);
    expect(volumes).toEqual([stateDirOf(config)]);
    const runs = only(runtime, 'RUN')
      .map((run) => run.args)
      .join('\n');
    const user = only(runtime, 'USER')[0].args;
    expect(runs).toContain(`chown ${user} ${stateDirOf(config)}`);
  });

  it('checks health on /health/ready, with a start period covering the snowflake start-up wait', () => {
    const { options, command } = healthcheckOf(runtime);
    expect(command[0]).toBe('node'); // slim images have no curl
    const script = command.join(' ');
    const path = /path:'([^']+)'/.exec(script)?.[1];
    expect(path).toBe('/health/ready');
    expect(SERVED.has(path!)).toBe(true);
    expect(script).toMatch(/port:process\.env\.PORT\|\|8080/);
    expect(durationSeconds(options['start-period'])).toBeGreaterThanOrEqual(
      startupSeconds(PRODUCTION_DEFAULTS),
    );
  });

  it('starts dist/src/main.js and ships the migration script and the CLI data source (present after npm run build)', () => {
    expect(JSON.parse(only(runtime, 'CMD')[0].args)).toEqual(['node', MAIN_SCRIPT]);
    const copies = only(runtime, 'COPY').map((copy) => copy.args);
    for (const needed of ['/app/dist', '/app/node_modules', '/app/libs/leaf/dist']) {
      expect(copies.some((copy) => copy.includes(needed))).toBe(true);
    }
    // The build stage compiles what tsconfig.build.json includes: every folder of it is copied in.
    const build = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    expect(build.include).toEqual(expect.arrayContaining(['src', 'migrations']));
    const sources = only(stages[0], 'COPY').flatMap((copy) => copy.args.split(/\s+/).slice(0, -1));
    expect(sources).toEqual(expect.arrayContaining(build.include));
    expectBuiltScript(MAIN_SCRIPT);
    expectBuiltScript(MIGRATE_SCRIPT);
    expectBuiltScript(CLI_DATA_SOURCE);
  });
});

// ---------------------------------------------------------------------------------------
// docker-compose.yml

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; start_period?: string };
  stop_grace_period?: string;
  restart?: string;
}

/** `${NAME:-default}` interpolation as compose does it, with no variables set. */
const interpolate = (value: string): string =>
  value.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1').replace(/\$\$/g, '$');

/** docker-compose.yml and its PostgreSQL variant: the database service, type and scripts. */
const COMPOSE_VARIANTS = [
  {
    file: 'docker-compose.yml',
    database: 'mariadb',
    type: 'mysql',
    users: 'deploy/compose/10-leaf-users.sh',
    grants: 'deploy/compose/grant-app.sh',
    grant: /GRANT SELECT, UPDATE ON \\`\$\{MARIADB_DATABASE:\?\}\\`\.leaf_alloc TO/,
  },
  {
    file: 'docker-compose.postgres.yml',
    database: 'postgres',
    type: 'postgres',
    users: 'deploy/compose/postgres/10-leaf-users.sh',
    grants: 'deploy/compose/postgres/grant-app.sh',
    grant:
      /GRANT SELECT, INSERT, UPDATE ON leaf_alloc, leaf_worker_lease, leaf_sequence_issuer TO \$\{LEAF_APP_USER:\?\}/,
  },
] as const;

type Compose = { services: Record<string, ComposeService>; volumes: Record<string, unknown> };

for (const variant of COMPOSE_VARIANTS)
  describe(variant.file, () => {
    const compose = yaml.load(read(variant.file)) as Compose;
    const services = compose.services;
    const leafImage = services.migrate?.image;
    const apps = Object.entries(services).filter(
      ([, service]) => service.image === leafImage && service.command === undefined,
    );
    const envOfService = (service: ComposeService): Record<string, string> =>
      Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([name, value]) => [
          name,
          interpolate(String(value)),
        ]),
      );

    it('runs two application instances from the image built from the Dockerfile', () => {
      expect(leafImage).toBeDefined();
      expect(apps.map(([name]) => name)).toHaveLength(2);
      for (const [, service] of apps)
        expect(service.build).toMatchObject({ dockerfile: 'Dockerfile' });
    });

    it('gives the instances only variables the application reads, in a production configuration it accepts', () => {
      for (const [, service] of apps) {
        const config = configOf(envOfService(service));
        expect(config.segment.database.type).toBe(variant.type);
        expect(config.options['snowflake.zookeeper.connect']).toBeDefined();
        expect(config.segment.migrate).toBe(false);
      }
    });

    it('gives each instance its own stable identity (service name and PORT) and state volume', () => {
      const identities = new Set<string>();
      const volumes = new Set<string>();
      for (const [name, service] of apps) {
        const env = envOfService(service);
        const config = configOf(env);
        expect(env.NODE_ENV).toBe('production');
        expect(env.LEAF_SNOWFLAKE_ADVERTISE).toBe(`${name}:${config.port}`);
        identities.add(config.options['snowflake.advertise']!);
        const mounts = (service.volumes ?? []).map((volume) => volume.split(':'));
        const state = mounts.find(([, target]) => target === stateDirOf(config));
        expect(state).toBeDefined();
        expect(Object.keys(compose.volumes)).toContain(state![0]); // a named volume
        volumes.add(state![0]);
        expect((service.ports ?? []).map((port) => port.split(':').pop())).toEqual([
          String(config.port),
        ]);
      }
      expect(identities.size).toBe(apps.length);
      expect(volumes.size).toBe(apps.length);
    });

    it('checks every instance on /health/ready, after the start-up wait', () => {
      for (const [, service] of apps) {
        const config = configOf(envOfService(service));
        const test = service.healthcheck!.test.join(' ');
        expect(test).toContain("path:'/health/ready'");
        expect(test).toMatch(/port:process\.env\.PORT\|\|8080/);
        expect(SERVED.has('/health/ready')).toBe(true);
        expect(durationSeconds(service.healthcheck!.start_period!)).toBeGreaterThanOrEqual(
          startupSeconds(config),
        );
        expect(durationSeconds(service.stop_grace_period!)).toBeGreaterThan(10);
      }
    });

    it('orders the start: database healthy -> migrate -> grants -> instances (ZooKeeper healthy)', () => {
      const migrate = services.migrate;
      expect(migrate.command).toEqual(['node', MIGRATE_SCRIPT]);
      expect(migrate.restart).toBe('no');
      expect(migrate.depends_on).toEqual({ [variant.database]: { condition: 'service_healthy' } });
      // The database settings only, enough for the migration command on their own (the image
      // sets NODE_ENV=production).
      const env = envOfService(migrate);
      for (const name of Object.keys(env)) expect(DATABASE_ENV_VARS).toContain(name);
      expect(loadDatabaseConfig({ NODE_ENV: 'production', ...env }).type).toBe(variant.type);
      expect(services['db-grants'].depends_on).toEqual({
        migrate: { condition: 'service_completed_successfully' },
      });
      for (const [, service] of apps) {
        expect(service.depends_on).toEqual({
          'db-grants': { condition: 'service_completed_successfully' },
          zookeeper: { condition: 'service_healthy' },
        });
      }
      expect(services[variant.database].healthcheck).toBeDefined();
      expect(services.zookeeper.healthcheck).toBeDefined();
    });

    it('migrates with the migration account and serves with the least-privileged one', () => {
      const userOf = (url: string): string => new URL(url).username;
      const accounts = services[variant.database].environment!;
      expect(userOf(envOfService(services.migrate).LEAF_DB_URL)).toBe(accounts.LEAF_MIGRATOR_USER);
      for (const [, service] of apps) {
        expect(userOf(envOfService(service).LEAF_DB_URL)).toBe(accounts.LEAF_APP_USER);
      }
      expect(accounts.LEAF_APP_USER).not.toBe(accounts.LEAF_MIGRATOR_USER);
      const mounted = (service: ComposeService) =>
        (service.volumes ?? []).map((volume) => volume.split(':')[0].replace(/^\.\//, ''));
      expect(mounted(services[variant.database])).toContain(variant.users);
      expect(mounted(services['db-grants'])).toContain(variant.grants);
      expect(read(variant.grants)).toMatch(variant.grant);
    });

    it('runs an image that has the database driver (a dependency, kept by npm prune --omit=dev)', () => {
      const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
      expect(Object.keys(pkg.dependencies)).toContain(variant.type === 'mysql' ? 'mysql2' : 'pg');
    });

    if (variant.file !== 'docker-compose.yml') {
      it('differs from docker-compose.yml in the database only', () => {
        const mariadb = (yaml.load(read('docker-compose.yml')) as Compose).services;
        const strip = (service: ComposeService) => {
          const { LEAF_DB_URL: url, ...rest } = envOfService(service);
          return { ...service, environment: rest, url: url !== undefined };
        };
        for (const [name, service] of apps) expect(strip(service)).toEqual(strip(mariadb[name]));
        expect(services.zookeeper).toEqual(mariadb.zookeeper);
      });
    }
  });

// ---------------------------------------------------------------------------------------
// Kubernetes

type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [key: string]: unknown;
};
/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are untyped YAML, checked field by field */
type Any = any;

const K8S = join(ROOT, 'deploy', 'k8s');
const K8S_FILES = readdirSync(K8S).filter((file) => /\.ya?ml$/.test(file));
const loadManifests = (path: string): Manifest[] =>
  (yaml.loadAll(readFileSync(path, 'utf8')) as Manifest[]).filter(
    (doc) => doc !== null && doc !== undefined,
  );

/**
 * The manifests of deploy/k8s, and of the deploy/k8s-postgres overlay: the base with its
 * Secret patches merged in (as kustomize merges a Secret's stringData, key by key).
 */
function k8sManifests(overlay: string | null): Manifest[] {
  const base = K8S_FILES.filter((file) => file !== 'kustomization.yaml').flatMap((file) =>
    loadManifests(join(K8S, file)),
  );
  if (overlay === null) return base;
  const dir = join(ROOT, overlay);
  const kustomization = yaml.load(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Any;
  expect(kustomization.resources).toEqual(['../k8s']);
  const patches = (kustomization.patches as Array<{ path: string }>).flatMap((patch) =>
    loadManifests(join(dir, patch.path)),
  );
  for (const patch of patches) {
    // Every patch names an object of the base, and only a Secret's data is changed.
    const target = base.find(
      (m) => m.kind === patch.kind && m.metadata.name === patch.metadata.name,
    );
    expect([patch.kind, patch.metadata.name, target !== undefined]).toEqual([
      'Secret',
      patch.metadata.name,
      true,
    ]);
    expect(Object.keys(patch).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'stringData']);
    const data = (target as Any).stringData;
    for (const key of Object.keys(patch.stringData as object))
      expect(Object.keys(data)).toContain(key);
    (target as Any).stringData = { ...data, ...(patch.stringData as object) };
  }
  return base;
}

for (const variant of [
  { name: 'deploy/k8s', overlay: null, type: 'mysql' },
  { name: 'deploy/k8s-postgres (overlay)', overlay: 'deploy/k8s-postgres', type: 'postgres' },
] as const)
  describe(`Kubernetes manifests (${variant.name})`, () => {
    const dir = K8S;
    const files = K8S_FILES;
    const kustomization = yaml.load(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Any;
    const manifests = k8sManifests(variant.overlay);
    const find = (kind: string, name?: string): Any => {
      const found = manifests.filter(
        (m) => m.kind === kind && (name === undefined || m.metadata.name === name),
      );
      expect([kind, name, found.length]).toEqual([kind, name, 1]);
      return found[0];
    };
    const sts = find('StatefulSet');
    const pod = sts.spec.template.spec;
    const container = pod.containers[0];
    const namespace: string = kustomization.namespace;
    const configMap = find(
      'ConfigMap',
      container.envFrom.find((e: Any) => e.configMapRef).configMapRef.name,
    );
    const appSecret = find(
      'Secret',
      container.envFrom.find((e: Any) => e.secretRef).secretRef.name,
    );
    const headless = find('Service', sts.spec.serviceName);
    const http = (name: string | number): number =>
      typeof name === 'number'
        ? name
        : container.ports.find((p: Any) => p.name === name).containerPort;

    /** The container's environment as the pod `leaf-0` sees it ($(VAR) expanded). */
    const podEnv = (podName: string): Record<string, string> => {
      const downward: Record<string, string> = {
        'metadata.name': podName,
        'metadata.namespace': namespace,
      };
      const env: Record<string, string> = {
        ...configMap.data,
        ...appSecret.stringData,
        // A real secret in place of the placeholder (too short for the application's rule).
        LEAF_ADMIN_TOKEN: 'x'.repeat(32),
      };
      const helpers = new Set<string>();
      for (const entry of container.env as Any[]) {
        if (entry.valueFrom?.fieldRef) {
          env[entry.name] = downward[entry.valueFrom.fieldRef.fieldPath];
          helpers.add(entry.name);
        } else {
          env[entry.name] = String(entry.value).replace(
            /\$\(([A-Z_]+)\)/g,
            (_, name: string) => env[name],
          );
        }
      }
      for (const name of helpers) delete env[name]; // only there to build other values
      return env;
    };
    const config = configOf(podEnv(`${sts.metadata.name}-0`));

    it('lists every manifest in kustomization.yaml, in one namespace', () => {
      expect([...kustomization.resources].sort()).toEqual(
        files.filter((f) => f !== 'kustomization.yaml').sort(),
      );
      expect(find('Namespace').metadata.name).toBe(namespace);
    });

    it('sets only variables the application reads, in a production configuration it accepts', () => {
      expect(configMap.data.NODE_ENV).toBe('production');
      expect(config.segment.database.type).toBe(variant.type);
      expect(config.options['snowflake.zookeeper.connect']).toBeDefined();
      expect(config.segment.migrate).toBe(false);
      for (const entry of container.env as Any[]) {
        // Downward-API helpers are allowed only when another value uses them.
        if (!APP_VARS.has(entry.name)) {
          expect(entry.valueFrom?.fieldRef).toBeDefined();
          expect(
            container.env.some((other: Any) =>
              String(other.value ?? '').includes(`$(${entry.name})`),
            ),
          ).toBe(true);
        }
      }
      expect(Object.keys(appSecret.stringData).sort()).toEqual(['LEAF_ADMIN_TOKEN', 'LEAF_DB_URL']);
      expect(appSecret.kind).toBe('Secret');
      expect(Object.keys(configMap.data)).not.toContain('LEAF_DB_URL');
      expect(Object.keys(configMap.data)).not.toContain('LEAF_ADMIN_TOKEN');
    });

    it('advertises the pod’s stable DNS name under the headless Service, with PORT', () => {
      const advertise = container.env.find((e: Any) => e.name === 'LEAF_SNOWFLAKE_ADVERTISE').value;
      const fieldOf = (name: string) =>
        container.env.find((e: Any) => e.name === name)?.valueFrom?.fieldRef?.fieldPath;
      const [, podVar, service, nsVar, port] =
        /^\$\((\w+)\)\.([a-z0-9-]+)\.\$\((\w+)\)\.svc:(\d+)$/.exec(advertise)!;
      expect(fieldOf(podVar)).toBe('metadata.name');
      expect(fieldOf(nsVar)).toBe('metadata.namespace');
      expect(service).toBe(sts.spec.serviceName);
      expect(Number(port)).toBe(config.port);
      expect(config.options['snowflake.advertise']).toBe(
        `leaf-0.${headless.metadata.name}.${namespace}.svc:${config.port}`,
      );
      expect(headless.spec.clusterIP).toBe('None');
    });

    it('keeps LEAF_STATE_DIR on the volumeClaimTemplate, one ReadWriteOnce volume per pod', () => {
      const mount = container.volumeMounts.find((m: Any) => m.mountPath === stateDirOf(config));
      expect(mount).toBeDefined();
      const template = sts.spec.volumeClaimTemplates.find(
        (t: Any) => t.metadata.name === mount.name,
      );
      expect(template).toBeDefined();
      expect(template.spec.accessModes).toEqual(['ReadWriteOnce']);
      expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsUser);
    });

    it('probes routes the application serves, on PORT', () => {
      expect(http('http')).toBe(config.port);
      for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
        const { path, port } = container[probe].httpGet;
        expect([probe, SERVED.has(path)]).toEqual([probe, true]);
        expect(http(port)).toBe(config.port);
      }
      expect(container.readinessProbe.httpGet.path).toBe('/health/ready');
      // A dependency outage must not restart the pods: liveness checks the process only.
      expect(container.livenessProbe.httpGet.path).toBe('/health/live');
    });

    it('gives start-up the snowflake start-up wait (LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS) and more', () => {
      const {
        initialDelaySeconds = 0,
        periodSeconds = 10,
        failureThreshold = 3,
      } = container.startupProbe;
      expect(initialDelaySeconds + periodSeconds * failureThreshold).toBeGreaterThanOrEqual(
        startupSeconds(config),
      );
    });

    it('shuts down within the grace period, after the preStop delay', () => {
      const [command, seconds] = container.lifecycle.preStop.exec.command;
      expect(command).toBe('sleep');
      // The graceful shutdown itself needs time after the delay: at least 15 s of it.
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(Number(seconds) + 15);
    });

    it('runs non-root with resource requests and limits', () => {
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.securityContext.runAsUser).not.toBe(0);
      for (const kind of ['requests', 'limits']) {
        expect(container.resources[kind].cpu).toBeDefined();
        expect(container.resources[kind].memory).toBeDefined();
      }
    });

    it('selects the StatefulSet’s pods from both Services and the PodDisruptionBudget', () => {
      const labels = sts.spec.template.metadata.labels;
      const matches = (selector: Record<string, string>) =>
        Object.entries(selector).every(([key, value]) => labels[key] === value);
      expect(matches(sts.spec.selector.matchLabels)).toBe(true);
      const services = manifests.filter((m) => m.kind === 'Service') as Any[];
      expect(services).toHaveLength(2);
      for (const service of services) {
        expect(matches(service.spec.selector)).toBe(true);
        expect(service.spec.ports.map((p: Any) => http(p.targetPort))).toEqual([config.port]);
      }
      expect(services.find((s) => s.spec.clusterIP !== 'None')).toBeDefined();
      const pdb = find('PodDisruptionBudget');
      expect(matches(pdb.spec.selector.matchLabels)).toBe(true);
    });

    it('admits the ID port only from client namespaces, monitoring and the other Leaf pods', () => {
      const policy = find('NetworkPolicy');
      const labels = sts.spec.template.metadata.labels;
      expect(
        Object.entries(policy.spec.podSelector.matchLabels).every(
          ([key, value]) => labels[key] === value,
        ),
      ).toBe(true);
      expect(policy.spec.policyTypes).toEqual(['Ingress']);
      const rules = policy.spec.ingress as Any[];
      // Every rule names its sources; the application's port, or the internal listener's
      // (LEAF_INTERNAL_PORT), which only the other Leaf pods may reach.
      const own = { podSelector: { matchLabels: policy.spec.podSelector.matchLabels } };
      for (const rule of rules) {
        expect(rule.from.length).toBeGreaterThan(0);
        const ports = rule.ports.map((p: Any) => http(p.port));
        if (ports.includes(config.port)) expect(ports).toEqual([config.port]);
        else expect({ ports, from: rule.from }).toEqual({ ports: [8081], from: [own] });
      }
      const sources = rules.flatMap((rule) => rule.from as Any[]);
      expect(sources).toContainEqual({
        podSelector: { matchLabels: policy.spec.podSelector.matchLabels },
      });
      expect(sources.filter((s) => s.namespaceSelector).length).toBeGreaterThanOrEqual(1);
      // No rule admits everyone (an empty `from` or an empty selector).
      for (const source of sources) {
        const selector = source.namespaceSelector ?? source.podSelector;
        expect(Object.keys(selector.matchLabels ?? {}).length).toBeGreaterThan(0);
      }
    });

    it('migrates in a Job with the migration account’s Secret, running the compiled script', () => {
      const job = find('Job');
      const migrate = job.spec.template.spec.containers[0];
      expect(migrate.command).toEqual(['node', MIGRATE_SCRIPT]);
      expect(migrate.image).toBe(container.image);
      const secret = find('Secret', migrate.envFrom[0].secretRef.name);
      expect(secret.metadata.name).not.toBe(appSecret.metadata.name);
      const env = {
        ...Object.fromEntries(migrate.env.map((e: Any) => [e.name, e.value])),
        ...secret.stringData,
      };
      expect(Object.keys(env).sort()).toEqual(['LEAF_DB_URL', 'NODE_ENV']);
      expect(new URL(env.LEAF_DB_URL).username).not.toBe(
        new URL(appSecret.stringData.LEAF_DB_URL).username,
      );
      // What the migration command reads, and all it needs (no ZooKeeper, no worker ID).
      expect(loadDatabaseConfig(env).type).toBe(variant.type);
      expect(job.spec.template.spec.restartPolicy).toBe('Never');
    });
  });

// ---------------------------------------------------------------------------------------
// The health-check command itself, against a running application.

describe('the HEALTHCHECK command of the Dockerfile and docker-compose.yml', () => {
  const stages = parseDockerfile(read('Dockerfile'));
  const { command } = healthcheckOf(stages[stages.length - 1]);
  jest.setTimeout(60_000);
  afterAll(() => killAllAppProcesses());

  const runCheck = (port: number): Promise<number> =>
    new Promise((resolve) => {
      execFile(
        command[0] === 'node' ? process.execPath : command[0],
        command.slice(1),
        {
          env: { ...process.env, PORT: String(port) },
          timeout: 15_000,
        },
        (error) => resolve(error ? ((error as { code?: number }).code ?? 1) : 0),
      );
    });

  it('is the same in the Dockerfile and every compose file', () => {
    for (const { file } of COMPOSE_VARIANTS) {
      const compose = yaml.load(read(file)) as Compose;
      expect([file, compose.services['leaf-1'].healthcheck!.test]).toEqual([
        file,
        ['CMD', ...command],
      ]);
    }
  });

  it('exits 0 on a ready application and 1 when nothing listens', async () => {
    const dir = tempDir('leaf-deploy-healthcheck');
    try {
      // The embedded configuration: no service needed, ready as soon as it listens.
      const app = AppProcess.spawn(
        {
          PORT: '0',
          LEAF_DB_URL: `sqlite:${join(dir.path, 'leaf.sqlite')}`,
          LEAF_STATE_DIR: dir.path,
        },
        { timeoutMs: 50_000 },
      );
      const port = await app.listening();
      expect(await runCheck(port)).toBe(0);
      expect((await app.stop()).timedOut).toBe(false);
      expect(await runCheck(port)).toBe(1);
    } finally {
      dir.remove();
    }
  });
});
