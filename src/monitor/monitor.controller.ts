import { Controller, Get, Headers, Optional, Res, UseGuards } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { SegmentService } from 'nestjs-leaf';
import { MonitorPagesGuard } from '../admin/admin.guard';
import { tagRowJson, TAG_ROW_COLUMNS } from '../admin/tag-row.json';
import { modeService } from '../id/id-routes';

function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function table(
  title: string,
  headers: string[],
  rows: unknown[][],
  more: { title: string; headers: string[]; rows: unknown[][] } | null = null,
): string {
  const grid = (h: string[], r: unknown[][]) =>
    `<table><tr>${h.map((x) => `<th>${escapeHtml(x)}</th>`).join('')}</tr>${r
      .map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`)
      .join('')}</table>`;
  const extra = more ? `<h2>${escapeHtml(more.title)}</h2>${grid(more.headers, more.rows)}` : '';
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}</style>
</head><body><h1>${escapeHtml(title)}</h1>${grid(headers, rows)}${extra}</body></html>`;
}

/** `/cache` with segment mode off: no tag, never initialized, no high-water mark. */
const SEGMENT_OFF: ReturnType<SegmentService['snapshot']> = {
  initialized: false,
  lastRefreshAt: null,
  buffers: [],
  highWater: { state: 'off', store: null, root: null },
};

/** `/cache`'s second table with several databases: one row per database. */
const DATABASE_COLUMNS = ['#', 'database', 'state', 'ranges', 'tags', 'failures', 'lastError'];

/** One buffer as the monitoring pages receive it. */
type BufferSnapshot = ReturnType<SegmentService['snapshot']>['buffers'][number];

/**
 * `/cache` columns: Leaf's own, in Leaf's order (`SegmentBufferView`), then ours. `init` =
 * the buffer has its first segment, `next` = the next segment is loaded, `pos` = the slot
 * (0/1) of the current segment in Leaf's two-slot buffer; `value`/`max`/`step` of each slot.
 * `high-water mark`: the tag's mark as this instance last read or wrote it, `off` without the
 * mark (docs/operations.md).
 */
export const CACHE_COLUMNS = [
  'name',
  'init',
  'next',
  'pos',
  'value0',
  'max0',
  'step0',
  'value1',
  'max1',
  'step1',
  'loading',
  'dynamic step',
  'base step',
  'loads',
  'last error',
  'high-water mark',
];

/**
 * One `/cache` row in Leaf's semantics: slot `pos` holds the current segment, the other slot
 * the loaded next segment, or else the segment used before (Leaf keeps it there), or else
 * Leaf's empty segment (0, 0, 0).
 */
export function leafCacheRow(
  b: BufferSnapshot,
  highWater: 'off' | 'on' | 'unavailable',
): unknown[] {
  const empty = { value: '0', max: '0', step: 0 };
  const other = b.next ?? b.previous ?? empty;
  const current = b.current ?? empty;
  const [slot0, slot1] = b.pos === 0 ? [current, other] : [other, current];
  return [
    b.tag,
    b.initialized,
    b.next !== null,
    b.pos,
    slot0.value,
    slot0.max,
    slot0.step,
    slot1.value,
    slot1.max,
    slot1.step,
    b.loading,
    b.step,
    b.baseStep,
    b.loads,
    b.lastError ?? '',
    highWater === 'off' ? 'off' : (b.highWater ?? ''),
  ];
}

/**
 * Leaf's monitoring pages: `/cache` (per-tag buffer state) and `/db` (`leaf_alloc` rows).
 * HTML for people, JSON when the client asks for `application/json`. IDs are strings.
 */
@ApiTags('monitoring')
@Controller()
@UseGuards(MonitorPagesGuard)
export class MonitorController {
  constructor(@Optional() private readonly segments?: SegmentService) {}

  @Get('cache')
  cache(@Headers('accept') accept: string | undefined, @Res() reply: FastifyReply): void {
    const snapshot = this.segments?.snapshot() ?? SEGMENT_OFF;
    if (accept?.includes('application/json')) return void reply.send(snapshot);
    void reply.type('text/html; charset=utf-8').send(
      table(
        'Leaf segment cache',
        CACHE_COLUMNS,
        snapshot.buffers.map((b) => leafCacheRow(b, snapshot.highWater.state)),
        snapshot.databases
          ? {
              title: 'Databases',
              headers: DATABASE_COLUMNS,
              rows: snapshot.databases.map((d) => [
                d.index,
                d.name,
                d.state,
                d.ranges,
                d.tags,
                d.failures,
                d.lastError,
              ]),
            }
          : null,
      ),
    );
  }

  @Get('db')
  async db(
    @Headers('accept') accept: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const rows = await modeService(this.segments, 'segment').listAllocations();
    if (accept?.includes('application/json')) {
      return void reply.send(
        rows.map((row) => ({
          ...row,
          maxId: row.maxId.toString(),
          updateTime: row.updateTime?.toISOString() ?? null,
        })),
      );
    }
    void reply.type('text/html; charset=utf-8').send(
      table(
        'leaf_alloc',
        [...TAG_ROW_COLUMNS],
        rows.map((row) => TAG_ROW_COLUMNS.map((column) => tagRowJson(row)[column])),
      ),
    );
  }
}
