/** Three projects: `unit` (pure logic and module wiring, no services; also the system
 * checker's own tests), `e2e` (the
 * application against real MariaDB and ZooKeeper), `system-ci` (the CI subset of the system
 * tests, `test/system/*.e2e-spec.ts`, `npm run test:system-ci`) and `system` (the full fault
 * matrix, `test/system/*.system-spec.ts`, docs/reliability.md). `npm test` runs the first two,
 * `npm run test:system` the last. A fourth, `image` (`test/*.image-spec.ts`, `npm run
 * test:image`): the Docker image reproduced from the Dockerfile and deploy/k8s, built and run
 * read-only as uid 1000 against MariaDB and ZooKeeper (docs/operations.md, "Deployment"). */
const base = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  transform: { '^.+\\.ts$': 'ts-jest' },
  testEnvironment: 'node',
  // The library's package name and subpaths resolve to its source (tests never need a
  // build); keep in step with tsconfig.json "paths" and libs/leaf/package.json "exports".
  moduleNameMapper: {
    '^nestjs-leaf$': '<rootDir>/libs/leaf/src',
    '^nestjs-leaf/(health|testing|client|errors|typeorm|orm-typeorm|orm-prisma|orm|formats|ports|internal|otel|http|numbers|journal|gapless)$':
      '<rootDir>/libs/leaf/src/$1.ts',
    '^nestjs-leaf/client/nest$': '<rootDir>/libs/leaf/src/client-nest.ts',
    '^@app/leaf(|/.*)$': '<rootDir>/libs/leaf/src$1',
  },
  modulePathIgnorePatterns: ['<rootDir>/libs/leaf/dist', '<rootDir>/dist'],
};

module.exports = {
  testTimeout: 30000,
  // Suites share no state (each has its own database, ZooKeeper namespace, state and temp
  // directories, ports 0; faults go to private servers or proxies), and most e2e time is spent
  // waiting on processes, servers and timers: more workers than a 2-core machine's cores.
  // `npm run test:system` runs in band.
  maxWorkers: 4,
  projects: [
    {
      ...base,
      displayName: 'unit',
      rootDir: __dirname,
      testMatch: [
        '<rootDir>/libs/**/*.spec.ts',
        '<rootDir>/src/**/*.spec.ts',
        // The system-test checker's own tests (pure logic).
        '<rootDir>/test/system/**/*.spec.ts',
      ],
    },
    {
      ...base,
      displayName: 'e2e',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/system/'],
    },
    {
      // `npm run test:system-ci`: the CI subset of the fault matrix (`test/system/*.e2e-spec.ts`,
      // each scenario at its `ci` size with real processes and injected faults); a CI stage of
      // its own, so that `npm test` stays within its five minutes.
      ...base,
      displayName: 'system-ci',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/system/**/*.e2e-spec.ts'],
    },
    {
      ...base,
      displayName: 'system',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/system/**/*.system-spec.ts'],
    },
    {
      // `npm run test:bench`: `npm run bench -- --quick` and its table (test/bench.bench-spec.ts),
      // minutes with both cores pinned: a CI stage of its own, outside `npm test`.
      ...base,
      displayName: 'bench',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.bench-spec.ts'],
    },
    {
      ...base,
      displayName: 'image',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.image-spec.ts'],
    },
    {
      // `npm run test:consumer`: fresh apps from the Nest CLI set up as libs/leaf/README.md
      // says (test/consumer-apps/); minutes of installs each, so a CI stage of its own.
      ...base,
      displayName: 'consumer',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/consumer-apps/**/*.consumer-spec.ts'],
    },
  ],
};
