import { loadOptionalPeer } from '../../adapters/optional-peer';

type Swagger = typeof import('@nestjs/swagger');

/**
 * An ID in OpenAPI: a decimal string (a JSON number loses IDs above 2^53). The pattern allows
 * 19 digits; the bound 2^63 − 1 is in the description and checked by `ParseLeafIdPipe`.
 */
export const LEAF_ID_SCHEMA = {
  type: 'string',
  pattern: '^[1-9][0-9]{0,18}$',
  maxLength: 19,
  description: 'A 64-bit Leaf ID in decimal, as a string (1 to 9223372036854775807)',
  example: '2128094966440788019',
} as const;

/** Loads the optional peer dependency `@nestjs/swagger` when a decorator is applied. */
function loadSwagger(): Swagger {
  return loadOptionalPeer<Swagger>(
    '@nestjs/swagger',
    'ApiLeafId/ApiLeafIdParam need',
    '@nestjs/swagger',
  );
}

/** Options of {@link ApiLeafId}. */
export interface ApiLeafIdOptions {
  /** Overrides the schema's description. @default LEAF_ID_SCHEMA's */
  readonly description?: string;
  /** Whether the property is required. @default true */
  readonly required?: boolean;
  /** An array of IDs. @default false */
  readonly isArray?: boolean;
}

/**
 * `@ApiProperty` for an ID property of a DTO: a decimal string ({@link LEAF_ID_SCHEMA}).
 * @throws {LeafConfigurationError} when `@nestjs/swagger` is not installed.
 */
export function ApiLeafId(options: ApiLeafIdOptions = {}): PropertyDecorator {
  const { ApiProperty } = loadSwagger();
  const { isArray = false, required = true, description } = options;
  const schema = { ...LEAF_ID_SCHEMA, ...(description ? { description } : {}) };
  return ApiProperty(
    isArray
      ? { type: 'array', items: schema, required, description: schema.description }
      : { ...schema, required },
  );
}

/**
 * `@ApiParam` for an ID path parameter named `name` (pair it with `ParseLeafIdPipe`).
 * @throws {LeafConfigurationError} when `@nestjs/swagger` is not installed.
 */
export function ApiLeafIdParam(name: string, description?: string): MethodDecorator {
  const { ApiParam } = loadSwagger();
  return ApiParam({
    name,
    required: true,
    schema: { ...LEAF_ID_SCHEMA },
    description: description ?? LEAF_ID_SCHEMA.description,
  });
}
