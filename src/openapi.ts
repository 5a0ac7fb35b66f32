import { createReadStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { applyDecorators } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  DocumentBuilder,
  SwaggerModule,
  type OpenAPIObject,
  type SchemaObject,
} from '@nestjs/swagger';

/** Where the OpenAPI document is served: the UI at `/docs`, the JSON at `/docs-json`. */
export const OPENAPI_PATH = 'docs';

const ERROR_REF = { $ref: '#/components/schemas/LeafError' };

/** The name of the client-token security scheme (`LEAF_CLIENT_TOKENS`, docs/security.md). */
export const CLIENT_SECURITY = 'client';

/** An ID on the wire: a decimal string (snowflake IDs exceed 2^53, a JSON number would corrupt them). */
export const ID_SCHEMA = {
  type: 'string',
  pattern: '^[0-9]+$',
  description: 'A 64-bit ID in decimal, as a string',
  example: '2128094966440788019',
} as const;

/** An ID as `?format=` writes it: decimal, or a fixed-width form (docs/formats.md). */
export const FORMATTED_ID_SCHEMA: SchemaObject = {
  oneOf: [
    ID_SCHEMA,
    {
      type: 'string',
      pattern:
        '^([0-9A-Za-z]{11}|[0-9a-z]{13}|[0-9A-Z]{13}|[A-Za-z][0-9A-Za-z]{11}|[A-Za-z][0-9A-Za-z]{21})$',
      description:
        'With `format`: base62 (11 characters), base36 or Crockford base32 (13), opaque (12), opaque-uuid (22)',
      example: '2XChFHRNNRr',
    },
  ],
};

/** The JSON error body every error answers with (`LeafExceptionFilter`). */
const ERROR_SCHEMA = {
  type: 'object',
  required: ['statusCode', 'code', 'message'],
  properties: {
    statusCode: { type: 'integer', example: 404 },
    code: {
      type: 'string',
      pattern: '^LEAF_[A-Z_]+$',
      description: 'Stable error code (README, "Error codes")',
      example: 'LEAF_TAG_NOT_FOUND',
    },
    message: { type: 'string' },
    leafCode: {
      type: 'integer',
      description:
        'The number the Java Leaf returned as an "ID" for the same condition, where it had one',
      example: -2,
    },
  },
};

const ERROR_WHEN: Record<number, string> = {
  400: 'LEAF_INVALID_ARGUMENT: malformed key, count, ID, format or prefix',
  401: 'LEAF_UNAUTHORIZED: missing or wrong bearer token',
  403: 'LEAF_FORBIDDEN: the client token is not allowed this mode or tag, or count exceeds its burst',
  404: 'LEAF_TAG_NOT_FOUND, LEAF_MODE_DISABLED or LEAF_OPAQUE_DISABLED; gapless: LEAF_GAPLESS_SERIES_NOT_FOUND, LEAF_GAPLESS_NOT_RESERVED',
  409: 'LEAF_TAG_EXISTS; on the ID routes LEAF_TAG_RESERVED (a tag with a business-number format); gapless: LEAF_GAPLESS_SERIES_EXISTS, LEAF_GAPLESS_KEY_MISMATCH, LEAF_GAPLESS_SETTLED',
  410: "LEAF_GAPLESS_RESERVATION_EXPIRED: the reservation outlived its TTL and was voided; LEAF_OPAQUE_KEY_RETIRED: an opaque ID's key version is not in the key ring",
  429: "LEAF_RATE_LIMITED: over the client's quota (with Retry-After)",
  503: 'Not ready, allocation failing, clock behind, lease unavailable, shutting down (with Retry-After where retrying helps)',
};

/** Documents the error answers `statuses` with the JSON error body. */
export function ApiLeafErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: ERROR_WHEN[status] ?? 'error',
        content: { 'application/json': { schema: ERROR_REF } },
      }),
    ),
  );
}

/** The `{key}` path parameter (a `biz_tag`). */
export function ApiKeyParam(): MethodDecorator {
  return ApiParam({
    name: 'key',
    description: 'Business tag (`biz_tag`); for snowflake validated and otherwise ignored',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' },
  });
}

/** The `count` query parameter of the batch and range routes. */
export function ApiCountQuery(description = 'How many IDs, 1..LEAF_MAX_BATCH'): MethodDecorator {
  return ApiQuery({
    name: 'count',
    required: true,
    description,
    schema: { type: 'integer', minimum: 1 },
  });
}

/** The optional `format` query parameter of the ID routes. */
export function ApiFormatQuery(): MethodDecorator {
  return ApiQuery({
    name: 'format',
    required: false,
    description:
      'Write the IDs in a fixed-width form whose text order is numeric order, or opaque, or (snowflake mode) opaque-uuid (docs/public-ids.md; default: decimal)',
    schema: { type: 'string', enum: ['base62', 'base36', 'base32', 'opaque', 'opaque-uuid'] },
  });
}

/** A mode's route called with an empty key (`GET /api/{mode}/get/`): always 400. */
export function ApiEmptyKey(): MethodDecorator {
  return applyDecorators(ApiOperation({ summary: 'Empty key: always 400' }), ApiLeafErrors(400));
}

/** A mode's single-ID route (`GET /api/{mode}/get/{key}`): the ID as `text/plain`. */
export function ApiIdText(
  summary: string,
  description = "The ID in decimal, no newline (Leaf's wire format)",
): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary }),
    ApiKeyParam(),
    ApiFormatQuery(),
    ApiProduces('text/plain'),
    ApiOkResponse({ description, content: { 'text/plain': { schema: FORMATTED_ID_SCHEMA } } }),
    ApiLeafErrors(400, 404, 503),
  );
}

/** A mode's batch route (`GET /api/{mode}/ids/{key}?count=N`): `{key, ids}` as JSON. */
export function ApiIdList(summary: string): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary }),
    ApiKeyParam(),
    ApiCountQuery(),
    ApiFormatQuery(),
    ApiListOk('key', 'ids', FORMATTED_ID_SCHEMA, 'IDs, increasing'),
    ApiLeafErrors(400, 404, 503),
  );
}

/** A batch's JSON answer, `{<name>: string, <list>: [items]}`. */
export function ApiListOk(
  name: string,
  list: string,
  items: SchemaObject,
  description?: string,
): MethodDecorator {
  return ApiOkResponse({
    ...(description === undefined ? {} : { description }),
    schema: {
      type: 'object',
      required: [name, list],
      properties: { [name]: { type: 'string' }, [list]: { type: 'array', items } },
    },
  });
}

/**
 * Builds the OpenAPI document of `app`. With `clientTokens` (the instance has
 * `LEAF_CLIENT_TOKENS`) the client routes require the `client` bearer scheme; without, the
 * requirement is left out: those routes are open.
 */
export function createOpenApiDocument(
  app: NestFastifyApplication,
  clientTokens: boolean,
): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Leaf')
    .setDescription(
      "Meituan Leaf's distributed IDs (segment and snowflake modes). IDs are decimal strings (`^[0-9]+$`); " +
        'every error is a JSON body `{statusCode, code, message, leafCode?}` with a stable `code`.',
    )
    .setVersion('1')
    // addSecurity, not addBearerAuth: the latter labels every bearer token a JWT, and the
    // admin token is an opaque string compared as it is (docs/security.md).
    .addSecurity('admin', {
      type: 'http',
      scheme: 'bearer',
      description:
        'LEAF_ADMIN_TOKEN: an opaque string of at least 16 characters, sent as `Authorization: Bearer <token>`; compared in constant time, never logged.',
    });
  if (clientTokens) {
    // addSecurity, not addBearerAuth: the latter defaults bearerFormat to JWT.
    builder.addSecurity(CLIENT_SECURITY, {
      type: 'http',
      scheme: 'bearer',
      description:
        'A client token of LEAF_CLIENT_TOKENS: an opaque string (not a JWT), known to the server by its SHA-256, scoped to modes and tags, with a quota (docs/security.md, "Callers")',
    });
  }
  const document = SwaggerModule.createDocument(app, builder.build());
  document.components ??= {};
  document.components.schemas = { ...document.components.schemas, LeafError: ERROR_SCHEMA };
  // Any error not documented per route still answers in the error body.
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      if (typeof operation !== 'object' || operation === null || !('responses' in operation))
        continue;
      if (!clientTokens && operation.security) {
        operation.security = operation.security.filter(
          (requirement: Record<string, string[]>) => !(CLIENT_SECURITY in requirement),
        );
        if (operation.security.length === 0) delete operation.security;
      }
      operation.responses.default ??= {
        description: 'Error (JSON error body)',
        content: { 'application/json': { schema: ERROR_REF } },
      };
    }
  }
  return document;
}

/** The Swagger UI files `/docs` needs, served from swagger-ui-dist (a dependency of @nestjs/swagger). */
const UI_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

const UI_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Leaf API</title>
<link rel="stylesheet" href="/${OPENAPI_PATH}/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/${OPENAPI_PATH}/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: '/${OPENAPI_PATH}-json', dom_id: '#ui' });</script>
</body></html>`;

/**
 * Serves the OpenAPI JSON at `/docs-json` (and YAML at `/docs-yaml`) through
 * `SwaggerModule.setup`, and the Swagger UI at `/docs` with two routes of our own: Nest's
 * built-in UI needs `@fastify/static`, whose current major is ESM-only in part (Jest cannot
 * load it). The document is built on the first request, once every route is registered.
 */
export function setupOpenApi(app: NestFastifyApplication, clientTokens: boolean): void {
  SwaggerModule.setup(OPENAPI_PATH, app, () => createOpenApiDocument(app, clientTokens), {
    ui: false,
    raw: ['json', 'yaml'],
    jsonDocumentUrl: `${OPENAPI_PATH}-json`,
    yamlDocumentUrl: `${OPENAPI_PATH}-yaml`,
  });
  const fastify = app.getHttpAdapter().getInstance();
  // swagger-ui-dist is @nestjs/swagger's own dependency (its UI files).
  const assets = dirname(
    require.resolve('swagger-ui-dist/package.json', {
      paths: [require.resolve('@nestjs/swagger')],
    }),
  );
  fastify.get(`/${OPENAPI_PATH}`, (_request, reply) => {
    void reply.type('text/html; charset=utf-8').send(UI_PAGE);
  });
  fastify.get<{ Params: { file: string } }>(`/${OPENAPI_PATH}/:file`, (request, reply) => {
    if (!Object.hasOwn(UI_FILES, request.params.file)) {
      void reply.status(404).send({
        statusCode: 404,
        code: 'LEAF_NOT_FOUND',
        message: `Cannot GET ${request.url}`,
      });
      return;
    }
    void reply
      .type(UI_FILES[request.params.file])
      .header('cache-control', 'public, max-age=86400')
      .send(createReadStream(join(assets, request.params.file)));
  });
}
