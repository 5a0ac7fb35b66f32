/**
 * Peers prove who they are (docs/security.md, "Peers"), on MariaDB and on PostgreSQL: three
 * instances of the application in sequence mode, elected in the database, in the middle of a
 * rotation of the cluster secret — the issuer B accepts `new,old`, A already signs with `new`
 * alone, C still signs with `old` (`old,new`). Forwarding works from both; the internal routes
 * refuse a request without a credential, with a wrong one, an expired one or a replayed one
 * (401 `LEAF_UNAUTHORIZED`, the same answer for all); a batch beyond what a forwarder sends is
 * refused whole (400, nothing taken); a key the cluster does not know creates nothing.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SequenceService } from 'nestjs-leaf';
import { PEER_WINDOW_MS, PeerSigner } from '@app/leaf/core/http/peer-signature';
import { SEQUENCE_FORWARD_PATH } from '@app/leaf/adapters/http/sequence-forward.transport';
import { eventually } from '@app/leaf/testing/eventually';
import {
  expectLeafError,
  inject,
  startSelfAdvertisingApp,
  tempDir,
  type InjectedAnswer,
} from './support/app';
import { SERVER_FLAVOURS, type ServerTestDatabase } from './support/server-databases';
import { describeWithServices } from './support/services';

jest.setTimeout(60_000);

const NEW = 'new-cluster-secret-'.padEnd(44, 'n');
const OLD = 'old-cluster-secret-'.padEnd(44, 'o');
const MAX_BATCH = 50;
const PROBE_PATH = '/api/sequence/internal/instance';

/** `GET path?query` signed by `signer` (as another instance would send it), through `inject`. */
function signedGet(
  app: NestFastifyApplication,
  signer: PeerSigner,
  path: string,
  query = '',
): Promise<InjectedAnswer> {
  return inject(app, query === '' ? path : `${path}?${query}`, {
    headers: signer.headers('GET', path, query),
  });
}

function expectRefused(answer: InjectedAnswer): void {
  const body = expectLeafError(answer, 401, 'LEAF_UNAUTHORIZED');
  // The same answer for every refusal, naming no secret.
  expect(body.message).toBe(
    'this route is for the other instances of the cluster: a valid peer signature is required',
  );
}

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices([flavour.service], `peers prove who they are on ${flavour.label}`, () => {
    let db: ServerTestDatabase;
    let state: ReturnType<typeof tempDir>;
    const apps: NestFastifyApplication[] = [];
    /** The issuer (accepts new and old), a forwarder signing with new, one signing with old. */
    let a: NestFastifyApplication;
    let b: NestFastifyApplication;
    let c: NestFastifyApplication;
    const now = () => Date.now();

    async function start(secret: string): Promise<NestFastifyApplication> {
      const app = await startSelfAdvertisingApp({
        HOST: '127.0.0.1',
        LEAF_DB_URL: db.url,
        LEAF_NAME: `peers${flavour.service}`,
        LEAF_SNOWFLAKE_ENABLED: 'false',
        LEAF_STATE_DIR: state.path,
        LEAF_MAX_BATCH: String(MAX_BATCH),
        LEAF_SEQUENCE_GROUPS: '2',
        LEAF_SEQUENCE_HEARTBEAT_MS: '100',
        LEAF_CLUSTER_SECRET: secret,
      });
      apps.push(app);
      return app;
    }

    const groups = (app: NestFastifyApplication) => app.get(SequenceService).stats().groups;
    const metricsOf = async (app: NestFastifyApplication) => (await inject(app, '/metrics')).body;
    const rowCount = async () =>
      Number((await db.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM leaf_alloc'))[0]!.n);

    beforeAll(async () => {
      db = await flavour.create({ migrate: true });
      state = tempDir('leaf-peers');
      await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('orders', 1, 1000)");
      await db.query("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('ledger', 1, 1000)");
      b = await start(`${NEW},${OLD}`);
      // B issues for both groups before the others stand for election.
      await eventually(() => {
        expect(groups(b).map((group) => group.state)).toEqual(['issuer', 'issuer']);
      }, 20_000);
      a = await start(NEW);
      c = await start(`${OLD},${NEW}`);
      await eventually(() => {
        for (const app of [a, c]) {
          expect(groups(app).map((group) => group.issuer)).toEqual(
            groups(b).map((group) => group.issuer),
          );
        }
      }, 20_000);
    });

    afterAll(async () => {
      await Promise.all(apps.map((app) => app.close()));
      await db?.drop();
      state?.remove();
    });

    it('forwarding works with the secret, during a rotation: A signs with new, C with old, the issuer B accepts both', async () => {
      const ids: bigint[] = [];
      for (const app of [a, c, b, a, c]) {
        const answer = await inject(app, '/api/sequence/get/orders');
        expect([answer.statusCode, answer.body]).toEqual([200, expect.stringMatching(/^\d+$/)]);
        ids.push(BigInt(answer.body));
      }
      // Every later call above every earlier one, through every instance.
      expect([...ids].sort((x, y) => (x < y ? -1 : 1))).toEqual(ids);
      expect(a.get(SequenceService).stats().forwardedCalls).toBeGreaterThan(0);
      expect(c.get(SequenceService).stats().forwardedCalls).toBeGreaterThan(0);
      // Calls merged within LEAF_MAX_BATCH: 3 × 30 IDs of one key from A in one turn.
      const batches = await Promise.all(
        [1, 2, 3].map(() => inject(a, '/api/sequence/ids/ledger?count=30')),
      );
      for (const batch of batches) expect(batch.statusCode).toBe(200);
      const all = batches.flatMap((batch) => (JSON.parse(batch.body) as { ids: string[] }).ids);
      expect(new Set(all).size).toBe(90);
    });

    it('every internal route refuses a request without a credential, with a wrong, an expired or a replayed one (401)', async () => {
      const query = 'keys=orders&counts=1';
      const before = await db.maxId('orders');
      for (const app of [a, b, c]) {
        for (const path of [SEQUENCE_FORWARD_PATH, PROBE_PATH]) {
          const q = path === PROBE_PATH ? '' : query;
          const url = q === '' ? path : `${path}?${q}`;
          expectRefused(await inject(app, url));
          expectRefused(await signedGet(app, new PeerSigner('w'.repeat(44), now), path, q));
          const past = () => Date.now() - PEER_WINDOW_MS - 1000;
          const secret = app === c ? OLD : NEW;
          expectRefused(await signedGet(app, new PeerSigner(secret, past), path, q));
          // A genuine request passes once; sent again, it is a replay.
          const headers = new PeerSigner(secret, now).headers('GET', path, q);
          expect((await inject(app, url, { headers })).statusCode).toBe(200);
          expectRefused(await inject(app, url, { headers }));
          // Its signature on another query does not fit.
          if (q !== '') {
            const other = new PeerSigner(secret, now).headers('GET', path, q);
            expectRefused(await inject(app, `${path}?keys=orders&counts=2`, { headers: other }));
          }
        }
      }
      // Only the forwarded requests that passed took IDs: one range of the issuer at most.
      expect(BigInt((await db.maxId('orders'))!) - BigInt(before!)).toBeLessThanOrEqual(1000n);
      // After the rotation's last step A no longer takes the old secret.
      expectRefused(await signedGet(a, new PeerSigner(OLD, now), PROBE_PATH));
      expect((await signedGet(b, new PeerSigner(OLD, now), PROBE_PATH)).statusCode).toBe(200);
    });

    it('refuses a batch beyond what a forwarding instance sends, whole, taking nothing (400)', async () => {
      const before = await db.maxId('orders');
      const signer = new PeerSigner(NEW, now);
      const refused = async (query: string) =>
        expectLeafError(
          await signedGet(b, signer, SEQUENCE_FORWARD_PATH, query),
          400,
          'LEAF_INVALID_ARGUMENT',
        );
      // A count above LEAF_MAX_BATCH: a forwarder merges a key's calls up to it, never more.
      await refused(`keys=orders&counts=${MAX_BATCH + 1}`);
      await refused('keys=orders,ledger&counts=1,1000000');
      // A key twice: a forwarder sends each key once per batch.
      await refused('keys=orders,ledger,orders&counts=1,1,1');
      // More items than a batch carries.
      const many = Array.from({ length: 1001 }, (_, i) => `k${i}`);
      await refused(`keys=${many.join(',')}&counts=${many.map(() => 1).join(',')}`);
      expect(await db.maxId('orders')).toBe(before);
      const within = await signedGet(
        b,
        signer,
        SEQUENCE_FORWARD_PATH,
        `keys=orders&counts=${MAX_BATCH}`,
      );
      expect(within.statusCode).toBe(200);
    });

    it('a key the cluster does not know creates nothing: no row, no buffer, no metric series', async () => {
      const rows = await rowCount();
      const keys = () => groups(b).reduce((sum, group) => sum + group.keys, 0);
      const keysBefore = keys();
      const signer = new PeerSigner(NEW, now);
      const unknown = Array.from({ length: 20 }, (_, i) => `nosuchkey${i}`);
      const answer = await signedGet(
        b,
        signer,
        SEQUENCE_FORWARD_PATH,
        `keys=${unknown.join(',')}&counts=${unknown.map(() => 1).join(',')}`,
      );
      expect(answer.statusCode).toBe(200);
      const { ranges } = JSON.parse(answer.body) as { ranges: Array<{ error?: { code: string } }> };
      expect(ranges.map((range) => range.error?.code)).toEqual(
        unknown.map(() => 'LEAF_TAG_NOT_FOUND'),
      );
      // The public route, forwarded from A and C to B: 404, the same nothing.
      for (const app of [a, c]) {
        expectLeafError(
          await inject(app, '/api/sequence/get/nosuchkey0'),
          404,
          'LEAF_TAG_NOT_FOUND',
        );
      }
      expect(await rowCount()).toBe(rows);
      expect(await db.maxId('nosuchkey0')).toBeNull();
      expect(keys()).toBe(keysBefore);
      for (const app of [a, b, c]) expect(await metricsOf(app)).not.toMatch(/nosuchkey/);
      // A known key does show up, so the absence above means something.
      expect(await metricsOf(b)).toMatch(/leaf_segment_load_duration_seconds_count\{tag="orders"/);
    });
  });
}
