'use strict';
/**
 * Run by test/consumer.e2e-spec.ts in a directory whose node_modules holds ONLY the packed
 * nestjs-leaf (no @nestjs, typeorm, drivers or zookeeper at all): takes IDs from the Leaf
 * server at argv[2] through `nestjs-leaf/client`, writes one in base62 through
 * `nestjs-leaf/formats`, and prints one JSON line with them and with every module the process
 * loaded from outside the package (there must be none).
 */
const path = require('node:path');
const { LeafClient, TagNotFoundError } = require('nestjs-leaf/client');
const { encodeIdText, decodeIdText } = require('nestjs-leaf/formats');

async function main() {
  const client = new LeafClient({ servers: [process.argv[2]], segment: { minRangeSize: 100 } });
  const first = await client.get('segment', 'leaf-segment-test');
  const batch = await client.getIds('segment', 'leaf-segment-test', 3);
  const sync = client.getSync('leaf-segment-test');
  const snowflake = await client.getIds('snowflake', 'any', 2);
  let unknown = 'none';
  try {
    await client.get('segment', 'no-such-tag');
  } catch (error) {
    unknown = `${error instanceof TagNotFoundError} ${error.code}`;
  }
  const stats = client.stats();
  await client.close();
  // nestjs-leaf/formats is pure: it loads nothing outside the package either.
  const base62 = encodeIdText(snowflake[0], 'base62');
  const formats = decodeIdText(base62, 'base62') === snowflake[0] ? base62 : 'mismatch';

  const packageDir = path.dirname(require.resolve('nestjs-leaf/package.json'));
  const foreign = Object.keys(require.cache).filter(
    (file) => !file.startsWith(packageDir + path.sep) && file !== __filename,
  );
  let nest = 'loaded';
  try {
    require('nestjs-leaf/client/nest');
  } catch (error) {
    nest = String(error && error.message).split('\n')[0];
  }
  console.log(
    JSON.stringify({
      segment: [first, ...batch, sync].map(String),
      snowflake: snowflake.map(String),
      unknown,
      rangeRequests: stats.rangeRequests,
      foreign,
      nest,
      formats,
    }),
  );
}

main().catch((error) => {
  console.error(error && error.stack ? error.stack : String(error));
  process.exit(1);
});
