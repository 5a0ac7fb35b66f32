/**
 * The Docker image is the tested runtime (issue 16). No container engine runs here, so the
 * image is reproduced from the Dockerfile and the Kubernetes manifests, read as they are
 * (./support/dockerfile.ts, ./support/image.ts):
 *
 * 1. its file tree: the build stage's COPY and RUN steps (`npm run build`, `npm prune
 *    --omit=dev` literally; `npm ci` by the checkout's node_modules), then the runtime
 *    stage's COPY --from list, WORKDIR, the volume directory, USER;
 * 2. its runtime: a private mount namespace in which that tree is the root, read-only, with
 *    the volumes of the manifests bound at their image paths (/var/lib/leaf, /tmp), this
 *    machine's /usr and /etc for the base image's Debian, the test's Node (the image's
 *    major) as /usr/local/bin/node; the commands run as the manifests' uid/gid, no
 *    capabilities, from WORKDIR, with the container's environment only (the image's ENV,
 *    then the ConfigMap, the Secret and `env` of the manifest);
 * 3. the steps of a deployment, against the local MariaDB (a private database) and ZooKeeper
 *    (a private LEAF_NAME): the migration Job's command, the StatefulSet container (the
 *    image's CMD), the HEALTHCHECK's command until it exits 0, the probes, IDs of both modes,
 *    STOPSIGNAL and a clean exit;
 * 4. and the same harness on broken variants (a wrong path in CMD, HEALTHCHECK or the Job,
 *    a file missing from the COPY list), which must fail.
 *
 * `npm run test:image` (about a minute and a half: the staged build is most of it). Needs
 * root (mount namespaces, chroot, setpriv), MariaDB and ZooKeeper; in CI their absence fails.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { HttpClient } from './support/http-client';
import { sparePort } from './system/harness/mariadb-server';
import { sleep } from './support/id-load';
import {
  BASE_IMAGE_PATH,
  ContainerProcess,
  readImageRecipe,
  stageBuild,
  stageRuntime,
  writableBy,
  type ContainerSpec,
  type StagedImage,
} from './support/image';
import { describeWhen, describeWithServices, zookeeperConnectString } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { connectZookeeperAdmin, deleteTree } from './support/zookeeper';

const ROOT = join(__dirname, '..');

/** A temp directory under `parent`, removed by `remove()`. */
function tempDir(prefix: string, parent: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(parent, `${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are untyped YAML */
type Any = any;

const DOCKERFILE = read('Dockerfile');
const recipe = readImageRecipe(DOCKERFILE);
const manifests: Any[] = readdirSync(join(ROOT, 'deploy', 'k8s'))
  .filter((file) => /\.ya?ml$/.test(file) && file !== 'kustomization.yaml')
  .flatMap((file) => yaml.loadAll(read(join('deploy', 'k8s', file))))
  .filter((doc) => doc !== null && doc !== undefined);
const find = (kind: string, name?: string): Any => {
  const found = manifests.filter(
    (m) => m.kind === kind && (name === undefined || m.metadata.name === name),
  );
  if (found.length !== 1) throw new Error(`deploy/k8s: ${found.length} ${kind} ${name ?? ''}`);
  return found[0];
};
const namespace: string = (yaml.load(read('deploy/k8s/kustomization.yaml')) as Any).namespace;
const sts = find('StatefulSet');
const job = find('Job');

/** The sandbox needs root: mount namespaces, chroot, setpriv. */
const sandboxReady =
  process.getuid?.() === 0 &&
  spawnSync('unshare', ['--mount', '--propagation', 'private', 'true']).status === 0;

/**
 * What a container of `podSpec` gets from Kubernetes: the image's ENV (and the base image's
 * PATH), HOSTNAME, the Service links of the namespace's non-headless Services, then envFrom
 * (ConfigMaps, Secrets, with `secrets` standing for the placeholders), then `env`
 * ($(VAR) expanded; the downward API for `podName`).
 */
function containerEnv(
  podSpec: Any,
  podName: string,
  secrets: Record<string, Record<string, string>>,
  config: Record<string, string>,
): Record<string, string> {
  const container = podSpec.containers[0];
  const env: Record<string, string> = {
    PATH: BASE_IMAGE_PATH,
    HOSTNAME: podName,
    // The base image's user 1000 (`node`): HOME from its passwd entry.
    HOME: '/home/node',
    ...recipe.env,
  };
  // enableServiceLinks (the default): <NAME>_SERVICE_HOST, <NAME>_PORT, … for each Service.
  for (const service of manifests.filter((m) => m.kind === 'Service')) {
    if (service.spec.clusterIP === 'None') continue;
    const prefix = service.metadata.name.toUpperCase().replace(/-/g, '_');
    const [port] = service.spec.ports;
    env[`${prefix}_SERVICE_HOST`] = '10.96.0.10';
    env[`${prefix}_SERVICE_PORT`] = String(port.port);
    env[`${prefix}_SERVICE_PORT_${port.name.toUpperCase()}`] = String(port.port);
    env[`${prefix}_PORT`] = `tcp://10.96.0.10:${port.port}`;
    env[`${prefix}_PORT_${port.port}_TCP`] = `tcp://10.96.0.10:${port.port}`;
    env[`${prefix}_PORT_${port.port}_TCP_PROTO`] = 'tcp';
    env[`${prefix}_PORT_${port.port}_TCP_PORT`] = String(port.port);
    env[`${prefix}_PORT_${port.port}_TCP_ADDR`] = '10.96.0.10';
  }
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, find('ConfigMap', from.configMapRef.name).data);
    if (from.secretRef) {
      const secret = find('Secret', from.secretRef.name);
      const values = secrets[from.secretRef.name];
      expect(Object.keys(values).sort()).toEqual(Object.keys(secret.stringData).sort());
      Object.assign(env, values);
    }
  }
  const downward: Record<string, string> = {
    'metadata.name': podName,
    'metadata.namespace': namespace,
  };
  for (const entry of container.env ?? []) {
    env[entry.name] = entry.valueFrom?.fieldRef
      ? downward[entry.valueFrom.fieldRef.fieldPath]
      : String(entry.value).replace(/\$\(([A-Za-z_]+)\)/g, (_, name: string) => env[name]);
  }
  return { ...env, ...config };
}

/** The sandbox for a container of `podSpec` with `argv`, its volumes at `volumes[name]`. */
function specOf(
  image: StagedImage,
  podSpec: Any,
  argv: readonly string[],
  env: Record<string, string>,
  volumes: Record<string, string>,
): ContainerSpec {
  const container = podSpec.containers[0];
  const security = { ...podSpec.securityContext, ...container.securityContext };
  expect(security.runAsNonRoot).toBe(true);
  expect(security.allowPrivilegeEscalation).toBe(false);
  expect(security.capabilities.drop).toEqual(['ALL']);
  return {
    rootfs: image.rootfs,
    argv,
    env,
    workdir: image.recipe.workdir,
    uid: security.runAsUser ?? image.recipe.user.uid,
    gid: security.runAsGroup ?? image.recipe.user.gid,
    groups: podSpec.securityContext.fsGroup === undefined ? [] : [podSpec.securityContext.fsGroup],
    readOnlyRootFilesystem: security.readOnlyRootFilesystem === true,
    mounts: (container.volumeMounts ?? []).map((mount: Any) => ({
      source: volumes[mount.name],
      target: mount.mountPath,
    })),
  };
}

/** Kubernetes `command` replaces the image's ENTRYPOINT and CMD; without it, CMD runs. */
const argvOf = (podSpec: Any): string[] => podSpec.containers[0].command ?? recipe.cmd;

/** `text` with `from` replaced by `to`; throws when `from` is not in it (a mutation must bite). */
function mutate(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`mutation: "${from}" not found`);
  return text.replace(from, to);
}

describeWithServices(
  ['mysql', 'zookeeper'],
  'the Docker image, reproduced without a container engine',
  () => {
    describeWhen(
      sandboxReady,
      'root and mount namespaces (unshare --mount)',
      'its steps, in order',
      () => {
        // On tmpfs when there is one: the staged tree is some 40 000 files, written and
        // removed in seconds there, in a minute on a busy disk.
        // Created in beforeAll: a skipped block still runs this body, never its hooks.
        let dir: { path: string; remove(): void } | undefined;
        const name = `image-${randomBytes(4).toString('hex')}`;
        const volumes: Record<string, string> = {};
        let buildRoot: string;
        let image: StagedImage;
        let db: TestDatabase;
        let admin: ZookeeperClient;
        let port: number;
        let app: ContainerProcess | undefined;
        let serviceEnv: Record<string, string>;
        const log: string[] = [];

        beforeAll(async () => {
          dir = tempDir('leaf-image', existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
          chmodSync(dir.path, 0o755);
          const started = Date.now();
          buildRoot = await stageBuild(recipe, ROOT, dir.path, log);
          image = await stageRuntime(recipe, buildRoot, dir.path, log);
          log.push(`staged in ${seconds(started)}`);
          // The pod's volumes: a volumeClaimTemplate (a fresh volume: fsGroup owns it) and emptyDirs.
          const fsGroup: number = sts.spec.template.spec.securityContext.fsGroup;
          const claims = new Set(sts.spec.volumeClaimTemplates.map((t: Any) => t.metadata.name));
          for (const mount of sts.spec.template.spec.containers[0].volumeMounts) {
            const path = join(dir.path, 'volumes', mount.name);
            mkdirSync(path, { recursive: true });
            chownSync(path, 0, fsGroup);
            chmodSync(path, claims.has(mount.name) ? 0o2775 : 0o1777);
            volumes[mount.name] = path;
          }
          db = await createTestDatabase();
          admin = await connectZookeeperAdmin();
          port = await sparePort(); // the image's 8080 may be taken on a shared machine
        }, 600_000);

        afterAll(async () => {
          console.log(`[image] ${log.join('\n[image] ')}`);
          await app?.kill();
          await db?.drop();
          if (admin) await deleteTree(admin, `/snowflake/${name}`);
          await admin?.close();
          const removing = Date.now();
          dir?.remove();
          console.log(`[image] removed the staged tree in ${seconds(removing)}`);
        });

        it(`runs on the image's Node major (${recipe.stages.map((s) => s.from).join(', ')})`, () => {
          // Native addons in node_modules were built by this Node: the image's line, or not the image.
          expect(`node ${process.versions.node.split('.')[0]}`).toBe(`node ${recipe.nodeMajor}`);
        });

        it('stages code owned by root that the service user cannot change, and its volume directories', () => {
          const app = join(image.rootfs, recipe.workdir);
          for (const script of [
            ...recipe.cmd.slice(1),
            ...argvOf(job.spec.template.spec).slice(1),
          ]) {
            expect([script, existsSync(join(app, script))]).toEqual([script, true]);
          }
          expect(writableBy(app, recipe.user.uid, recipe.user.gid)).toEqual([]);
          for (const volume of recipe.volumes) {
            expect(
              writableBy(join(image.rootfs, volume), recipe.user.uid, recipe.user.gid),
            ).toContain('.');
          }
          // Production dependencies only (`npm prune --omit=dev`).
          for (const dev of ['jest', 'eslint', 'prettier', '@nestjs/cli']) {
            expect([dev, existsSync(join(app, 'node_modules', dev))]).toEqual([dev, false]);
          }
        });

        it('the sandbox: read-only root file system, the manifest’s volumes writable, the manifest’s user', async () => {
          const probe = [
            'node',
            '-e',
            `const fs = require('node:fs'); const out = { uid: process.getuid(), gid: process.getgid(), cwd: process.cwd() };
         for (const p of ['${recipe.workdir}/x', '/x', '/tmp/x', '${recipe.volumes[0]}/x']) {
           try { fs.writeFileSync(p, ''); fs.rmSync(p); out[p] = 'written'; } catch (e) { out[p] = e.code; } }
         console.log(JSON.stringify(out));`,
          ];
          const pod = sts.spec.template.spec;
          const exit = await ContainerProcess.run(
            specOf(image, pod, probe, { PATH: BASE_IMAGE_PATH }, volumes),
          );
          expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
          expect(JSON.parse(exit.stdout)).toEqual({
            uid: pod.securityContext.runAsUser,
            gid: pod.securityContext.runAsGroup,
            cwd: recipe.workdir,
            [`${recipe.workdir}/x`]: 'EROFS',
            '/x': 'EROFS',
            '/tmp/x': 'written',
            [`${recipe.volumes[0]}/x`]: 'written',
          });
        });

        const jobSpec = (argv = argvOf(job.spec.template.spec)): ContainerSpec => {
          const podSpec = job.spec.template.spec;
          const env = containerEnv(
            podSpec,
            'leaf-migrate-x7k2p',
            { 'leaf-migrate-secrets': { LEAF_DB_URL: db.url } },
            {},
          );
          return specOf(image, podSpec, argv, env, {});
        };

        it('the migration Job’s command creates the schema in the private database', async () => {
          const exit = await ContainerProcess.run(jobSpec());
          expect({ code: exit.code, stderr: exit.stderr }).toEqual({ code: 0, stderr: '' });
          expect(await db.maxId('leaf-segment-test')).toBe('1');
        });

        const serviceSpec = (argv = argvOf(sts.spec.template.spec)): ContainerSpec => {
          const podSpec = sts.spec.template.spec;
          serviceEnv = containerEnv(
            podSpec,
            `${sts.metadata.name}-0`,
            {
              'leaf-secrets': {
                LEAF_DB_URL: db.url,
                LEAF_ADMIN_TOKEN: randomBytes(24).toString('hex'),
              },
            },
            // This machine's services, a private ZooKeeper namespace, a free port.
            { LEAF_ZK_ADDRESS: zookeeperConnectString(), LEAF_NAME: name, PORT: String(port) },
          );
          return specOf(image, podSpec, argv, serviceEnv, volumes);
        };
        const healthcheck = (command = recipe.healthcheck) =>
          ContainerProcess.run({ ...serviceSpec(command) }, 15_000);

        it('the image’s CMD starts the service; its HEALTHCHECK command passes; so do the probes', async () => {
          app = new ContainerProcess(serviceSpec(), 180_000);
          const deadline = Date.now() + 90_000;
          let last = await healthcheck();
          while (last.code !== 0 && Date.now() < deadline && !(await isDone(app))) {
            await sleep(1_000);
            last = await healthcheck();
          }
          if (last.code !== 0) {
            throw new Error(
              `HEALTHCHECK never passed (${last.code}: ${last.stderr})\n${app.stdout}\n${app.stderr}`,
            );
          }
          expect(serviceEnv.NODE_ENV).toBe('production');
          expect(app.stdout).toMatch(/Leaf listening on http:\/\//);
          const http = new HttpClient(`http://127.0.0.1:${port}`);
          try {
            const container = sts.spec.template.spec.containers[0];
            for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
              const answer = await http.send(container[probe].httpGet.path);
              expect([probe, answer.status]).toEqual([probe, 200]);
            }
          } finally {
            http.close();
          }
        });

        it('issues segment and snowflake IDs', async () => {
          const http = new HttpClient(`http://127.0.0.1:${port}`);
          try {
            const segment = await http.send('/api/segment/get/leaf-segment-test');
            expect([segment.status, segment.body]).toEqual([
              200,
              expect.stringMatching(/^[1-9]\d*$/),
            ]);
            const snowflake = await http.send('/api/snowflake/get/order');
            expect([snowflake.status, snowflake.body]).toEqual([
              200,
              expect.stringMatching(/^[1-9]\d{9,}$/),
            ]);
          } finally {
            http.close();
          }
        });

        it('a wrong path in the HEALTHCHECK fails it', async () => {
          const broken = readImageRecipe(
            mutate(DOCKERFILE, "path:'/health/ready'", "path:'/health/readyz'"),
          );
          expect((await healthcheck(broken.healthcheck)).code).not.toBe(0);
        });

        it(`STOPSIGNAL (${recipe.stopSignal}): a clean exit within the grace period, the state on the volume`, async () => {
          const podSpec = sts.spec.template.spec;
          const preStop = Number(podSpec.containers[0].lifecycle.preStop.exec.command[1]);
          app!.signal(recipe.stopSignal);
          const exit = await app!.exited;
          expect({ code: exit.code, signal: exit.signal, timedOut: exit.timedOut }).toEqual({
            code: 0,
            signal: null,
            timedOut: false,
          });
          expect(exit.durationMs).toBeDefined();
          expect(exit.stderr).toBe('');
          // The graceful part of the termination: what the grace period leaves after preStop.
          expect(podSpec.terminationGracePeriodSeconds - preStop).toBeGreaterThan(0);
          expect(
            readdirSync(volumes[sts.spec.volumeClaimTemplates[0].metadata.name]).length,
          ).toBeGreaterThan(0);
        });

        // The same harness on broken images: each must fail.
        it('a wrong path in CMD fails to start', async () => {
          const broken = readImageRecipe(
            mutate(DOCKERFILE, '"dist/src/main.js"', '"dist/main.js"'),
          );
          const exit = await ContainerProcess.run(serviceSpec(broken.cmd));
          expect(exit.code).not.toBe(0);
          expect(exit.stderr).toMatch(/Cannot find module '\/app\/dist\/main\.js'/);
        });

        it('a wrong path in the migration Job fails it', async () => {
          const command: string[] = argvOf(job.spec.template.spec);
          const exit = await ContainerProcess.run(
            jobSpec([command[0], command[1].replace('/src/', '/')]),
          );
          expect(exit.code).not.toBe(0);
          expect(exit.stderr).toMatch(/Cannot find module/);
        });

        it('a file missing from the runtime COPY list fails to start', async () => {
          const line = DOCKERFILE.split('\n').find((l) =>
            /^COPY --from=\S+ \S*libs\/leaf\/dist /.test(l),
          )!;
          const broken = readImageRecipe(mutate(DOCKERFILE, line, ''));
          const brokenImage = await stageRuntime(broken, buildRoot, dir!.path, [], 'rootfs-broken');
          const spec = { ...serviceSpec(), rootfs: brokenImage.rootfs };
          const exit = await ContainerProcess.run(spec);
          expect(exit.code).not.toBe(0);
          expect(exit.stderr).toMatch(/Cannot find module|MODULE_NOT_FOUND/);
        });
      },
    );
  },
);

const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** True once `process` has exited. */
async function isDone(process: ContainerProcess): Promise<boolean> {
  return Promise.race([process.exited.then(() => true), sleep(0).then(() => false)]);
}
