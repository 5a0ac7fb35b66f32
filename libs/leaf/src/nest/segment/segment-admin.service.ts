import { Inject, Injectable, Logger } from '@nestjs/common';
import { assertValidKey } from '../../core/arguments';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import { checkTagUpdate } from '../../core/segment/tag-definition';
import type { LeafAllocRow, LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import type { SegmentCacheSnapshot } from '../../core/segment/segment-cache';
import type { NewTag, TagUpdate } from '../../core/segment/leaf-alloc-store.port';
import { LEAF_ALLOC_STORE } from '../leaf.constants';
import { SegmentService } from './segment.service';

export type { NewTag, TagUpdate };

/** This instance's buffer of one tag (`/cache`'s row), as {@link SegmentService.snapshot} gives it. */
export type SegmentBufferState = SegmentCacheSnapshot['buffers'][number];

/** A tag: its `leaf_alloc` row and this instance's buffer (`null` before its first request). */
export interface TagState {
  readonly row: LeafAllocRow;
  readonly buffer: SegmentBufferState | null;
}

/**
 * Tag administration for segment mode: create a tag, change its step or description, list
 * tags with their state. A created tag is served at once by this instance, and by every
 * other instance on its first request (an unknown key is looked up in the database).
 *
 * Deliberately absent: lowering `max_id` and deleting a tag. Either would let IDs already
 * handed out be issued again (docs/operations.md). Provided with segment mode on.
 */
@Injectable()
export class SegmentAdminService {
  private readonly logger = new Logger(SegmentAdminService.name);

  constructor(
    @Inject(LEAF_ALLOC_STORE) private readonly store: LeafAllocStore,
    private readonly segments: SegmentService,
  ) {}

  /**
   * Every tag with its state, ordered by tag.
   * @throws {AllocationError} when the table cannot be read.
   */
  async listTags(): Promise<TagState[]> {
    const rows = await this.store.listAll();
    const buffers = this.buffersByTag();
    return rows.map((row) => ({ row, buffer: buffers.get(row.tag) ?? null }));
  }

  /**
   * One tag with its state.
   * @throws {InvalidArgumentError} for a malformed tag (before any query).
   * @throws {TagNotFoundError} when it has no row.
   */
  async getTag(tag: string): Promise<TagState> {
    assertValidKey(tag);
    const row = await this.store.findTag(tag);
    if (!row) throw new TagNotFoundError(tag);
    return { row, buffer: this.buffersByTag().get(tag) ?? null };
  }

  /**
   * Creates a tag (`maxId` default 1) and serves it at once.
   * @throws {InvalidArgumentError} for a malformed tag, step, `maxId` or description.
   * @throws {TagExistsError} when the tag exists (nothing changes).
   */
  async createTag(tag: NewTag): Promise<TagState> {
    const row = await this.store.createTag(tag);
    this.segments.tagCreated(row.tag);
    this.logger.log(`Created tag "${row.tag}" (max_id ${row.maxId}, step ${row.step})`);
    return { row, buffer: this.buffersByTag().get(row.tag) ?? null };
  }

  /**
   * Changes the step and/or description of a tag; never `max_id`. The new step is the base
   * of this tag's next allocations on every instance.
   * @throws {InvalidArgumentError} for an empty change or a malformed value.
   * @throws {TagNotFoundError} when it has no row.
   */
  async updateTag(tag: string, update: TagUpdate): Promise<TagState> {
    checkTagUpdate(tag, update);
    const row = await this.store.updateTag(tag, update);
    this.logger.log(`Updated tag "${tag}" (step ${row.step})`);
    return { row, buffer: this.buffersByTag().get(tag) ?? null };
  }

  private buffersByTag(): Map<string, SegmentBufferState> {
    return new Map(this.segments.snapshot().buffers.map((buffer) => [buffer.tag, buffer]));
  }
}
