import { Body, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ModeRoutes } from '../id/id-routes';
import { SegmentAdminService, type NewTag, type TagState, type TagUpdate } from 'nestjs-leaf';
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import { AdminRoutes } from './admin.guard';
import { descriptionOf, objectBody } from './json-body';
import { stepNumber, tagRowJson, type TagRowJson } from './tag-row.json';

/** A tag as the admin routes answer it: the row in Leaf's column names, IDs as strings. */
export interface TagJson extends TagRowJson {
  /** This instance's buffer of the tag (`/cache` JSON), `null` before its first request. */
  buffer: TagState['buffer'];
}

function toJson({ row, buffer }: TagState): TagJson {
  return { ...tagRowJson(row), buffer };
}

/** An integer given as a JSON number or a decimal string (the only exact form beyond 2^53). */
function integerField(value: unknown, name: string): bigint {
  if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) return BigInt(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  throw new InvalidArgumentError(`${name} must be an integer (a decimal string beyond 2^53)`, name);
}

/**
 * Tag administration (`LEAF_ADMIN_TOKEN` set; every route needs `Authorization: Bearer
 * <token>`). JSON in, JSON out, `max_id` as a decimal string. There is no delete and no way
 * to lower `max_id`: either would re-issue IDs already handed out.
 */
@AdminRoutes('admin/tags', 400, 401, 404, 409)
export class AdminController extends ModeRoutes('segment', SegmentAdminService) {
  /** Every tag: its row and this instance's buffer. */
  @Get()
  async list(): Promise<{ tags: TagJson[] }> {
    return { tags: (await this.service.listTags()).map(toJson) };
  }

  @Get(':tag')
  async get(@Param('tag') tag: string): Promise<TagJson> {
    return toJson(await this.service.getTag(tag));
  }

  /** `{"biz_tag", "step", "max_id"?: "1", "description"?}` → 201 and the tag. */
  @Post()
  @HttpCode(201)
  async create(@Body() raw: unknown): Promise<TagJson> {
    const body = objectBody(raw, ['biz_tag', 'max_id', 'step', 'description']);
    if (typeof body.biz_tag !== 'string') {
      throw new InvalidArgumentError('biz_tag must be a string', 'biz_tag');
    }
    const tag: NewTag = {
      tag: body.biz_tag,
      step: stepNumber(integerField(body.step, 'step')),
      ...(body.max_id !== undefined ? { maxId: integerField(body.max_id, 'max_id') } : {}),
      ...descriptionOf(body),
    };
    return toJson(await this.service.createTag(tag));
  }

  /** `{"step"?, "description"?}` → the tag after the change. `max_id` cannot be changed. */
  @Patch(':tag')
  async update(@Param('tag') tag: string, @Body() raw: unknown): Promise<TagJson> {
    // Named before the allowed fields: max_id is not merely unknown here, it can never change.
    if (typeof raw === 'object' && raw !== null && 'max_id' in raw) {
      throw new InvalidArgumentError('max_id cannot be changed: it only ever grows', 'max_id');
    }
    const body = objectBody(raw, ['step', 'description']);
    const update: TagUpdate = {
      ...(body.step !== undefined ? { step: stepNumber(integerField(body.step, 'step')) } : {}),
      ...descriptionOf(body),
    };
    return toJson(await this.service.updateTag(tag, update));
  }
}
