import { Body, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import {
  GaplessNumberService,
  type GaplessReport,
  type GaplessSeries,
  type NewGaplessSeries,
} from 'nestjs-leaf/gapless';
import { SERIES_PARAM } from '../gapless/gapless.controller';
import { ModeRoutes } from '../id/id-routes';
import { ApiLeafErrors } from '../openapi';
import { AdminRoutes } from './admin.guard';
import { objectBody } from './json-body';

/** The fields of a new series (`NewGaplessSeries`). */
export const NEW_SERIES_FIELDS = [
  'name',
  'prefix',
  'width',
  'period',
  'timeZone',
  'externalCode',
  'correctionsOf',
] as const;

/**
 * Gapless series (`LEAF_ADMIN_TOKEN` set; `Authorization: Bearer <token>`), JSON in and out
 * (docs/gapless.md, "Routes, CLI and operations"): create, list, show, and `verify` — the accounting and the record
 * chain of a series, with its gap report. A series is never changed nor deleted: its numbers
 * are evidence. 404 `LEAF_MODE_DISABLED` without `LEAF_GAPLESS`.
 */
@AdminRoutes('admin/gapless', 400, 401, 404)
export class AdminGaplessController extends ModeRoutes('gapless', GaplessNumberService) {
  /** Every series, by name. */
  @Get()
  async list(): Promise<{ series: GaplessSeries[] }> {
    return { series: await this.service.listSeries() };
  }

  @Get(':series')
  @SERIES_PARAM
  get(@Param('series') series: string): Promise<GaplessSeries> {
    return this.service.getSeries(series);
  }

  /**
   * `{"name", "prefix"?, "width"?, "period"?: "none"|"year"|"month", "timeZone"?,
   * "externalCode"?, "correctionsOf"?}` → 201 and the series (defaults filled).
   */
  @Post()
  @HttpCode(201)
  @ApiLeafErrors(409)
  create(@Body() raw: unknown): Promise<GaplessSeries> {
    const body = objectBody(raw, NEW_SERIES_FIELDS);
    return this.service.createSeries(body as unknown as NewGaplessSeries);
  }

  /**
   * The gap report (issued, confirmed, voided, pending) and what is wrong, if anything:
   * missing numbers, duplicates, voids without reason, unrecorded settlements, the first
   * broken record. `ok` is true when nothing is.
   */
  @Get(':series/verify')
  @ApiOperation({ summary: 'Verify a series: its accounting, its record chain, its gap report' })
  @SERIES_PARAM
  verify(@Param('series') series: string): Promise<GaplessReport> {
    return this.service.verify(series);
  }
}
