/** Two projects: `unit` (pure logic and module wiring, no services) and `e2e`
 * (the application against real MariaDB and ZooKeeper). `npm test` runs both. */
const base = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  transform: { '^.+\\.ts$': 'ts-jest' },
  testEnvironment: 'node',
  moduleNameMapper: {
    '^@app/leaf(|/.*)$': '<rootDir>/libs/leaf/src$1',
  },
};

module.exports = {
  testTimeout: 30000,
  projects: [
    { ...base, displayName: 'unit', rootDir: __dirname, testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/src/**/*.spec.ts'] },
    { ...base, displayName: 'e2e', rootDir: __dirname, testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
  ],
};
