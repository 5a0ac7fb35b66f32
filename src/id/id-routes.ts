import { Get, Header, Inject, Optional, Param, Query, type Type } from '@nestjs/common';
import { ModeDisabledError, type LeafMode } from 'nestjs-leaf';
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import {
  ID_FORMATS,
  ID_FORMAT_TABLE,
  OpaqueIds,
  idFormatWriter,
  type SnowflakeLayout,
} from 'nestjs-leaf/formats';
import { BusinessNumberService } from 'nestjs-leaf/numbers';
import { ClientRoute } from '../clients/client-route.decorator';
import { ApiEmptyKey, ApiIdList, ApiIdText, ApiLeafErrors } from '../openapi';
import { parseCount } from './count';

/** What the ID routes call on a mode's service. */
export interface ModeIds {
  get(key: string): Promise<bigint>;
  getIds(key: string, count: number): Promise<bigint[]>;
  /** Snowflake mode's layout, which the formats made from snowflake IDs are written with. */
  readonly layout?: SnowflakeLayout;
}

/**
 * A mode's service, or `ModeDisabledError`: `LeafModule` registers a mode's service only
 * when the mode is on, and its routes then answer 404 `LEAF_MODE_DISABLED`.
 */
export function modeService<S>(service: S | null | undefined, mode: LeafMode | 'gapless'): S {
  if (service === null || service === undefined) throw new ModeDisabledError(mode);
  return service;
}

/** What {@link ModeRoutes} gives its subclass. */
export interface ModeServiceRoutes<S> {
  /** The mode's service. @throws {ModeDisabledError} when the mode is off (404). */
  readonly service: S;
}

/**
 * The base of a controller served by one mode's `service`, injected when the mode registers
 * it: `this.service` is it, or `ModeDisabledError` (404 `LEAF_MODE_DISABLED`).
 */
export function ModeRoutes<S>(
  mode: LeafMode | 'gapless',
  service: Type<S>,
): abstract new (service?: S) => ModeServiceRoutes<S> {
  abstract class Routes implements ModeServiceRoutes<S> {
    readonly #service: S | null;

    constructor(@Optional() @Inject(service) instance?: S) {
      this.#service = instance ?? null;
    }

    get service(): S {
      return modeService(this.#service, mode);
    }
  }
  return Routes;
}

/**
 * What `?format=` takes: the forms of the ID table but decimal, which is what leaving it out
 * gives (`format=decimal` is refused, as it always was), and UUIDv7 and TypeID, which have
 * routes of their own (the forms made from snowflake IDs that are not keyed).
 */
const QUERY_FORMATS = ID_FORMATS.filter((name) => {
  const { keyed, snowflake } = ID_FORMAT_TABLE[name];
  return name !== 'decimal' && (keyed || !snowflake);
});

/** How the OpenAPI document describes a mode's two routes. */
export interface IdRoutesDocs {
  /** `get/:key`: summary, and the answer's description. */
  readonly get: readonly [string, string?];
  /** `ids/:key`: summary. */
  readonly ids: string;
  /** Routes under the mode's path that take a key too (answer 400 when called without one). */
  readonly keyed?: readonly string[];
}

/** What {@link IdRoutes} gives its subclass. */
export interface ModeIdRoutes<S> extends ModeServiceRoutes<S> {
  /**
   * Refuses a tag reserved for business numbers (`BusinessNumberService.assertIdTag`; segment
   * and sequence mode, with business numbers on), before anything is allocated.
   * @throws {TagReservedError} (409).
   */
  assertIdTag(key: string): void | Promise<void>;
  emptyKey(): never;
  get(key: string, format?: unknown): Promise<string>;
  ids(key: string, count: unknown, format?: unknown): Promise<{ key: string; ids: string[] }>;
}

/**
 * The shape of every mode's controller: `GET get/:key` (Leaf's plain-text ID), `GET ids/:key`
 * (a JSON batch), and the same routes with an empty key (400), served by the mode's own
 * service. The subclass adds `@Controller('api/<mode>')` and the mode's other routes.
 */
export function IdRoutes<S extends ModeIds>(
  mode: LeafMode,
  service: Type<S>,
  docs: IdRoutesDocs,
): abstract new (service?: S) => ModeIdRoutes<S> {
  // A format's tag is refused (409 LEAF_TAG_RESERVED) by the modes whose keys name rows.
  const reservedStatus = mode === 'snowflake' ? [] : [409];
  abstract class Routes extends ModeRoutes(mode, service) implements ModeIdRoutes<S> {
    readonly #layout: SnowflakeLayout | null;
    readonly #numbers: BusinessNumberService | null;
    readonly #opaque: OpaqueIds | null;

    constructor(
      @Optional() @Inject(service) ids?: S,
      @Optional() @Inject(BusinessNumberService) numbers?: BusinessNumberService,
      @Optional() @Inject(OpaqueIds) opaque?: OpaqueIds | null,
    ) {
      super(ids);
      this.#layout = ids?.layout ?? null;
      this.#opaque = opaque ?? null;
      // Snowflake keys name no row: nothing to reserve.
      this.#numbers = mode === 'snowflake' ? null : (numbers ?? null);
    }

    assertIdTag(key: string): void | Promise<void> {
      return this.#numbers?.assertIdTag(key);
    }

    /**
     * The writer of the optional `format` query parameter for `key`: absent → Leaf's decimal,
     * `base62`, `base36` or `base32` → that fixed-width form (docs/formats.md), `opaque` → an
     * opaque ID under the key ring (docs/public-ids.md). Read before an ID is taken, so a bad
     * value costs none.
     * @throws {InvalidArgumentError} for any other value (400).
     * @throws {OpaqueDisabledError} for `opaque` without a key ring (404).
     */
    #writer(format: unknown, key: string): (ids: readonly bigint[]) => string[] {
      const context = { mode, key, opaque: this.#opaque, layout: this.#layout };
      return format === undefined
        ? idFormatWriter('decimal', context)
        : idFormatWriter(format, context, QUERY_FORMATS);
    }

    /** A route called with an empty key (`/api/<mode>/get/`) is a client error, not an unknown route. */
    @Get(['get', 'ids', ...(docs.keyed ?? [])])
    @ClientRoute({ mode, tagParam: null, cost: 'none' })
    @ApiEmptyKey()
    emptyKey(): never {
      throw new InvalidArgumentError('key must not be empty', 'key');
    }

    /** Leaf-compatible: the ID in decimal (or `format`'s form), `text/plain`, no newline. */
    @Get('get/:key')
    @ClientRoute({ mode, tagParam: 'key', cost: 'one' })
    @Header('content-type', 'text/plain; charset=utf-8')
    @ApiIdText(...docs.get)
    @ApiLeafErrors(...reservedStatus)
    async get(@Param('key') key: string, @Query('format') format?: unknown): Promise<string> {
      const write = this.#writer(format, key);
      const service = this.service;
      const reserved = this.assertIdTag(key);
      if (reserved) await reserved;
      return write([await service.get(key)])[0]!;
    }

    /** `count` IDs as decimal strings (or in `format`'s form), increasing. */
    @Get('ids/:key')
    @ClientRoute({ mode, tagParam: 'key', cost: 'count' })
    @ApiIdList(docs.ids)
    @ApiLeafErrors(...reservedStatus)
    async ids(
      @Param('key') key: string,
      @Query('count') count: unknown,
      @Query('format') format?: unknown,
    ): Promise<{ key: string; ids: string[] }> {
      const write = this.#writer(format, key);
      const n = parseCount(count);
      const service = this.service;
      const reserved = this.assertIdTag(key);
      if (reserved) await reserved;
      return { key, ids: write(await service.getIds(key, n)) };
    }
  }
  return Routes;
}
