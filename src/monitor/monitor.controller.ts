import { Controller, Get, Headers, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { SegmentService } from 'nestjs-leaf';

function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function table(title: string, headers: string[], rows: unknown[][]): string {
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = rows
    .map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`)
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}</style>
</head><body><h1>${escapeHtml(title)}</h1><table><tr>${head}</tr>${body}</table></body></html>`;
}

/**
 * Leaf's monitoring pages: `/cache` (per-tag buffer state) and `/db` (`leaf_alloc` rows).
 * HTML for people, JSON when the client asks for `application/json`. IDs are strings.
 */
@Controller()
export class MonitorController {
  constructor(private readonly segments: SegmentService) {}

  @Get('cache')
  cache(@Headers('accept') accept: string | undefined, @Res() reply: FastifyReply): void {
    const snapshot = this.segments.snapshot();
    if (wantsJson(accept)) return void reply.send(snapshot);
    const rows = snapshot.buffers.map((b) => [
      b.tag,
      b.initialized,
      b.loading,
      b.step,
      b.baseStep,
      b.current ? `${b.current.value} / ${b.current.max}` : '-',
      b.next ? `${b.next.value} / ${b.next.max}` : '-',
      b.lastError ?? '',
    ]);
    void reply
      .type('text/html; charset=utf-8')
      .send(
        table(
          'Leaf segment cache',
          ['tag', 'init', 'loading', 'step', 'base step', 'current', 'next', 'last error'],
          rows,
        ),
      );
  }

  @Get('db')
  async db(
    @Headers('accept') accept: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const rows = await this.segments.listAllocations();
    if (wantsJson(accept)) {
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
        ['biz_tag', 'max_id', 'step', 'description', 'update_time'],
        rows.map((row) => [
          row.tag,
          row.maxId.toString(),
          row.step,
          row.description,
          row.updateTime?.toISOString(),
        ]),
      ),
    );
  }
}

function wantsJson(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('application/json');
}
