import { randomBytes } from 'node:crypto';
import { createTestDatabase } from '../test/support/test-database';
import { sparePort } from '../test/system/harness/zookeeper-server';
import { zookeeperConnectString } from '../test/support/services';
import { fixedRate, fixedRateCalls, load } from './support/http-load';
import { Pool } from 'undici';
import { LeafServer, ensureBuilt } from './support/leaf-server';
import { ms } from './support/report';

async function main() {
  ensureBuilt(console.log);
  const db = await createTestDatabase({ migrate: true });
  const servers: LeafServer[] = [];
  try {
    for (const tag of ['seq', 'seg']) await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 100000)', [tag]);
    const name = `bench-seq-${randomBytes(4).toString('hex')}`;
    const n = Number(process.env.N ?? 3);
    for (let i = 0; i < n; i++) {
      const port = await sparePort();
      servers.push(await LeafServer.start(`p${i}`, {
        PORT: String(port), HOST: '127.0.0.1', LEAF_DB_URL: db.url, LEAF_NAME: name,
        LEAF_SNOWFLAKE_ENABLED: 'false', LEAF_SEQUENCE_ENABLED: 'true',
        LEAF_SEQUENCE_ZK: zookeeperConnectString(), LEAF_SEQUENCE_ADVERTISE: `http://127.0.0.1:${port}`,
        LEAF_SEQUENCE_GROUPS: '1', LEAF_SEGMENT_HIGH_WATER_ZK: 'off', NODE_OPTIONS: '--require /tmp/gc.js',
      }, { cpu: null }));
    }
    await new Promise((r) => setTimeout(r, 3000));
    let issuer = servers[0];
    for (const s of servers) {
      const t = await fetch(`http://127.0.0.1:${s.port}/metrics`).then((r) => r.text());
      if (/^leaf_sequence_issuer\{group="0"\} 1$/m.test(t)) issuer = s;
    }
    const other = servers.find((s) => s !== issuer)!;
    const b = (s: LeafServer) => `http://127.0.0.1:${s.port}`;
    await load(`${b(other)}/api/sequence/get/seq`, { durationSec: 2, connections: 10 });
    await load(`${b(other)}/api/segment/get/seg`, { durationSec: 2, connections: 10 });
    const sec = Number(process.env.SEC ?? 6);
    for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
      for (const [label, url] of ([['segment', `${b(other)}/api/segment/get/seg`], ['issuer', `${b(issuer)}/api/sequence/get/seq`], ['forwarded', `${b(other)}/api/sequence/get/seq`]] as const).filter(([l]) => !process.env.ONLY || l === process.env.ONLY)) {
        const target = new URL(url);
        const pool = new Pool(target.origin, { connections: 20, pipelining: 1 });
        await fixedRateCalls(async () => { const res = await pool.request({ path: target.pathname, method: 'GET' }); await res.body.dump(); return true; }, { rate: 2000, durationSec: 1 });
        const cpu = () => servers.map((s) => { const f = require('node:fs').readFileSync(`/proc/${s.pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; });
        const selfCpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
        const c0 = cpu(); const s0 = selfCpu();
        const t0 = performance.now();
        const slow: string[] = [];
        const r = await fixedRateCalls(async () => {
          const a = performance.now();
          const res = await pool.request({ path: target.pathname, method: 'GET' });
          await res.body.dump();
          const d = performance.now() - a;
          if (d > 4) slow.push(`${((a - t0) / 1000).toFixed(3)}s:${d.toFixed(1)}`);
          return res.statusCode === 200;
        }, { rate: 2000, durationSec: sec });
        await pool.close();
        const c1 = cpu(); const s1 = selfCpu(); const el = performance.now() - t0;
        console.log('CPU % ' + servers.map((s, i) => `${s === issuer ? 'issuer' : s === other ? 'other' : 'idle'} ${((c1[i] - c0[i]) / el * 100).toFixed(0)}`).join(', ') + ` bench ${((s1 - s0) / el * 100).toFixed(0)}`);
        console.log(slow.join(' '));
        const sock = require('node:child_process').execSync(`ss -tn state established '( dport = :${issuer.port} )' | wc -l`).toString().trim();
        console.log(`sockets to issuer ${sock}`);
        console.log(`${round} ${label.padEnd(10)} p50 ${ms(r.p50Ms)} p99 ${ms(r.p99Ms)} p99.9 ${ms(r.p999Ms)} max ${ms(r.maxMs)} failed ${r.failed}`);
      }
    }
    const fs = require('node:fs');
    for (const s of servers) {
      const lines = fs.readFileSync((s as any).stdoutPath, 'utf8').split('\n').filter((l: string) => /Mark-Compact|Scavenge/.test(l));
      const slow = lines.filter((l: string) => { const m = /, ([\d.]+) \/ ([\d.]+) ms/.exec(l); return m && Number(m[1]) > 2; });
      console.log(s === issuer ? 'ISSUER' : s === other ? 'OTHER' : 'IDLE', lines.length, 'gcs', lines.filter((l: string) => /Mark-Compact/.test(l)).length, 'mark-compacts; >2ms:', slow.slice(0, 12).join('\n'));
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop().catch(() => undefined)));
    await db.drop();
  }
}
void main();
