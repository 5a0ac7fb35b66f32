// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { readFileSync } from 'node:fs';

/** The package's subpaths, as libs/leaf/package.json "exports" lists them (`client/nest`, …). */
const librarySubpaths = Object.entries(
  JSON.parse(readFileSync(new URL('./libs/leaf/package.json', import.meta.url), 'utf8')).exports,
)
  .filter(([subpath, target]) => subpath !== '.' && typeof target === 'object')
  .map(([subpath]) => subpath.slice(2));

/** The layers of the library (docs/design.md, "Layers"): the direction of imports is enforced. */
const layerMessage = (what) => `${what} (docs/design.md, "Layers").`;
const coreRestrictions = [
  {
    regex: '^@nestjs/',
    message: layerMessage('core is framework-free: no @nestjs in libs/leaf/src/core'),
  },
  {
    regex: '^(typeorm|mysql2|better-sqlite3|zookeeper|fs-native-extensions|@opentelemetry/.*|@prisma/.*)(/|$)',
    message: layerMessage('core imports no driver: put it in an adapter behind a port'),
  },
  {
    regex: '^(node:)?fs(/|$)',
    message: layerMessage(
      'core does no file I/O: the file state store is an adapter (adapters/fs)',
    ),
  },
  {
    regex: '(^|/)(adapters|nest|client)(/|$)',
    message: layerMessage(
      'core never imports adapters, nest or client: they depend on core, not the reverse',
    ),
  },
];

/**
 * The remote client (libs/leaf/src/client/, its entry client.ts, and its HTTP adapter) is
 * framework-free and loads no database or ZooKeeper code: `nestjs-leaf/client` must run in a
 * service that has only Node.
 */
const clientRestrictions = [
  {
    regex: '^@nestjs/',
    message: layerMessage('the client is framework-free: LeafClientModule lives in nest/client'),
  },
  {
    regex: '^(typeorm|mysql2|better-sqlite3|zookeeper|fs-native-extensions)(/|$)',
    message: layerMessage('the client loads no database or ZooKeeper driver'),
  },
  {
    regex: '(^|/)(nest|adapters/(typeorm|zookeeper|fs))(/|$)',
    message: layerMessage('the client imports core, client/ and adapters/http only'),
  },
];

/**
 * Adapters implement core's ports and never import the client: the client uses
 * adapters/http, so the other way round would be a circle (the transport's port is
 * core/http/leaf-transport.port.ts).
 */
const adapterNoClient = {
  // Relative paths only: a package's own `client` subpath (`@prisma/client`) is not ours.
  regex: '^(\\.{1,2}/)+(.+/)?client(/|$)',
  message: layerMessage('adapters never import client/: implement a port from core instead'),
};

/**
 * The application consumes the library as any user would: through the package name and its
 * exported subpaths (libs/leaf/package.json "exports"), never through its source.
 */
const appRestrictions = [
  {
    regex: '^@app/leaf(/|$)',
    message:
      "the application imports the library as a package: 'nestjs-leaf' (or an exported subpath), not '@app/leaf'.",
  },
  {
    regex: `^nestjs-leaf/(?!(${librarySubpaths.join('|')})$)`,
    message: `only the exported entry points of the package: 'nestjs-leaf' and its subpaths ${librarySubpaths.join(', ')}.`,
  },
  {
    regex: '(^|/)libs(/|$)',
    message: "the application never reaches into libs/: import from 'nestjs-leaf'.",
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      '**/node_modules/**',
      'libs/leaf/dist/**',
      'data/**',
      'coverage/**',
      '*.js',
      '*.mjs',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.name='Number'][arguments.0.name=/[iI]d$/]",
          message: 'IDs are bigint: never pass an ID through Number().',
        },
      ],
    },
  },
  {
    // A room a newcomer can read in one sitting: a production file over 400 lines mixes
    // concerns; split it by concern. The segment buffer is one state machine and may stay.
    files: ['libs/leaf/src/**/*.ts', 'src/**/*.ts'],
    ignores: [
      '**/*.spec.ts',
      'libs/leaf/src/testing/**',
      'libs/leaf/src/core/segment/segment-buffer.ts',
    ],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  {
    // `nestjs-leaf/formats` is core alone: pure functions, loadable without any peer.
    files: ['libs/leaf/src/core/**/*.ts', 'libs/leaf/src/formats.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: coreRestrictions }] },
  },
  {
    // No import circles in core: the port holds the tag shapes, tag-definition.ts (their
    // checks) imports the port, never the reverse.
    files: ['libs/leaf/src/core/segment/leaf-alloc-store.port.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...coreRestrictions,
            {
              regex: '^\\./tag-definition$',
              message:
                'tag-definition.ts imports the port: the port importing it back is a circle.',
            },
          ],
        },
      ],
    },
  },
  {
    // SnowflakeWorker composes the snowflake core (its start-up plan and assembly, the
    // session guard): nothing it uses imports it back; its options are
    // snowflake-worker.options.ts.
    files: ['libs/leaf/src/core/snowflake/**/*.ts'],
    ignores: ['libs/leaf/src/core/snowflake/snowflake-worker.ts', '**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...coreRestrictions,
            {
              regex: '^\\./snowflake-worker$',
              message:
                'the parts SnowflakeWorker composes never import it back (a circle): its options are in ./snowflake-worker.options.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/leaf/src/adapters/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@nestjs/',
              message: layerMessage('adapters are framework-free: Nest wiring lives in nest/'),
            },
            { regex: '(^|/)nest(/|$)', message: layerMessage('adapters never import nest') },
            adapterNoClient,
          ],
        },
      ],
    },
  },
  {
    // `client/nest.ts` is the entry `nestjs-leaf/client/nest`: the client's Nest module.
    files: ['libs/leaf/src/client/**/*.ts', 'libs/leaf/src/client.ts'],
    ignores: ['libs/leaf/src/client/nest.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: clientRestrictions }] },
  },
  {
    files: ['libs/leaf/src/adapters/http/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [...clientRestrictions, adapterNoClient] }],
    },
  },
  {
    files: ['migrations/**/*.ts', 'test/consumer/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: appRestrictions }] },
  },
  {
    // migrations/data-source.ts (the TypeORM CLI's) builds on the application's options; the
    // application importing migrations/ back would be a circle.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...appRestrictions,
            {
              regex: '^(\\.{1,2}/)+migrations(/|$)',
              message:
                'the application never imports migrations/ (migrations/data-source.ts depends on src/): the set is src/database/app-migrations.ts.',
            },
          ],
        },
      ],
    },
  },
);
