import { Get, Inject, Optional, Param, Query } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import { ID_FORMAT_TABLE, OpaqueIds } from 'nestjs-leaf/formats';
import { IdWhoisService } from 'nestjs-leaf/journal';
import { isLeafMode } from '../id/count';
import { AdminRoutes } from './admin.guard';
import { idOriginJson, type IdOriginJson } from './id-origin.json';

/**
 * Who issued an ID (`LEAF_ADMIN_TOKEN` set; `Authorization: Bearer <token>`), from the ID
 * journal (docs/operations.md, "Who issued an ID"): the range and instance of a segment or
 * sequence ID, the holder of a snowflake ID's worker ID in its millisecond. 404
 * `LEAF_ID_ORIGIN_UNKNOWN` when the journal cannot tell. The ID in decimal, or an opaque ID
 * (read with the key ring: docs/public-ids.md).
 */
@AdminRoutes('admin/ids', 400, 401, 404, 410)
export class AdminIdsController {
  constructor(
    private readonly whois: IdWhoisService,
    @Optional() @Inject(OpaqueIds) private readonly opaque?: OpaqueIds | null,
  ) {}

  /** `GET /admin/ids/{id}?mode=segment|sequence|snowflake&tag=…` (tag: segment and sequence). */
  @Get(':id')
  @ApiQuery({ name: 'mode', enum: ['segment', 'sequence', 'snowflake'] })
  @ApiQuery({ name: 'tag', required: false, description: 'the tag (segment and sequence IDs)' })
  async get(
    @Param('id') id: string,
    @Query('mode') mode: unknown,
    @Query('tag') tag: unknown,
  ): Promise<IdOriginJson> {
    if (!isLeafMode(mode)) {
      throw new InvalidArgumentError('mode must be segment, sequence or snowflake', 'mode');
    }
    if (tag !== undefined && typeof tag !== 'string') {
      throw new InvalidArgumentError('tag must be given once', 'tag');
    }
    const opaque = ID_FORMAT_TABLE.opaque;
    const number = opaque.looksLike(id) ? opaque.decode(id, { opaque: this.opaque }).id! : id;
    const origin = await this.whois.whois(mode, number, tag);
    return idOriginJson(origin);
  }
}
