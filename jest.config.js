/** Two projects: `unit` (pure logic and module wiring, no services) and `e2e`
 * (the application against real MariaDB and ZooKeeper). `npm test` runs both. */
const base = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  transform: { '^.+\\.ts$': 'ts-jest' },
  testEnvironment: 'node',
  // The library's package name and subpaths resolve to its source (tests never need a
  // build); keep in step with tsconfig.json "paths" and libs/leaf/package.json "exports".
  moduleNameMapper: {
    '^nestjs-leaf$': '<rootDir>/libs/leaf/src',
    '^nestjs-leaf/(health|testing)$': '<rootDir>/libs/leaf/src/$1.ts',
    '^@app/leaf(|/.*)$': '<rootDir>/libs/leaf/src$1',
  },
  modulePathIgnorePatterns: ['<rootDir>/libs/leaf/dist', '<rootDir>/dist'],
};

module.exports = {
  testTimeout: 30000,
  projects: [
    {
      ...base,
      displayName: 'unit',
      rootDir: __dirname,
      testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/src/**/*.spec.ts'],
    },
    {
      ...base,
      displayName: 'e2e',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
    },
    {
      ...base,
      displayName: 'system',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/system/**/*.system-spec.ts'],
    },
  ],
};
