import { Body, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { BusinessNumberService, type NumberFormatUpdate } from 'nestjs-leaf/numbers';
import { ModeRoutes } from '../id/id-routes';
import { AdminRoutes } from './admin.guard';
import { descriptionOf, objectBody } from './json-body';
import {
  NEW_FORMAT_FIELDS,
  formatRowJson,
  newFormatFromJson,
  widthField,
  type FormatRowJson,
} from './format-row.json';

/**
 * Business-number formats (`LEAF_ADMIN_TOKEN` set; every route needs `Authorization: Bearer
 * <token>`), JSON in and out. A format is defined once on an existing tag; afterwards only its
 * width (upwards) and description change: anything else could print a number twice. No delete.
 */
@AdminRoutes('admin/formats', 400, 401, 404, 409)
export class AdminFormatsController extends ModeRoutes('segment', BusinessNumberService) {
  /** Every format, ordered by tag. */
  @Get()
  async list(): Promise<{ formats: FormatRowJson[] }> {
    return { formats: (await this.service.listFormats()).map(formatRowJson) };
  }

  /** One format, with the period the database's clock is in now and its counter row. */
  @Get(':tag')
  async get(
    @Param('tag') tag: string,
  ): Promise<FormatRowJson & { current_period: string; counter_tag: string }> {
    const format = await this.service.getFormat(tag);
    const period = await this.service.currentPeriod(tag);
    return { ...formatRowJson(format), current_period: period.key, counter_tag: period.counterTag };
  }

  /**
   * `{"biz_tag", "width", "mode"?, "prefix"?, "separator"?, "date_pattern"?, "time_zone"?,
   * "reset"?, "description"?}` → 201 and the format (defaults filled).
   */
  @Post()
  @HttpCode(201)
  async create(@Body() raw: unknown): Promise<FormatRowJson> {
    const body = objectBody(raw, NEW_FORMAT_FIELDS);
    return formatRowJson(await this.service.defineFormat(newFormatFromJson(body)));
  }

  /** `{"width"?, "description"?}` → the format after the change; the width only grows. */
  @Patch(':tag')
  async update(@Param('tag') tag: string, @Body() raw: unknown): Promise<FormatRowJson> {
    const body = objectBody(raw, ['width', 'description']);
    const update: NumberFormatUpdate = {
      ...(body.width !== undefined ? { width: widthField(body.width) } : {}),
      ...descriptionOf(body),
    };
    return formatRowJson(await this.service.updateFormat(tag, update));
  }
}
