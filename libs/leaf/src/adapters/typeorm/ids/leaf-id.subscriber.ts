import type {
  EntityMetadata,
  EntitySubscriberInterface,
  InsertEvent,
  ObjectLiteral,
} from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { LeafConfigurationError } from '../../../core/errors/leaf-configuration.error';
import type { IdService, LeafMode } from '../../../core/id.service';
import { IdBatcher } from '../../../core/orm/id-batcher';
import {
  DEFAULT_ORM_MAX_BATCH_SIZE,
  maxBatchSizeProblems,
} from '../../../core/orm/id-fill-options';
import { type LeafIdPropertyType, leafIdColumnDeclaration } from './leaf-id-column.decorator';

/** One entity's ID column configured in one place instead of with `@LeafIdColumn`. */
export interface LeafIdEntityOptions {
  /** The entity class, or its name (an `EntitySchema`'s `name`). */
  entity: (abstract new (...args: never[]) => unknown) | string;
  /** The property to fill. @default the entity's single primary column */
  property?: string;
  /** The mode. @default the decorator's, else `defaults.mode` */
  mode?: LeafMode;
  /** The key. @default the decorator's, else `defaults.key`, else the table name */
  key?: string;
  /** The property's type (when no `@LeafIdColumn` says it). @default 'string' */
  type?: LeafIdPropertyType;
}

/** Options of {@link LeafIdSubscriber} (and `LeafTypeOrmModule.forRoot`). */
export interface LeafIdSubscriberOptions {
  /** What a column without its own mode or key takes. */
  defaults?: { mode?: LeafMode; key?: string };
  /** Per-entity settings; they win over the `@LeafIdColumn` options of the same column. */
  entities?: LeafIdEntityOptions[];
  /**
   * The largest `getIds` count the subscriber asks for at once: a bulk insert of more rows
   * takes several calls. Keep it at or below the ID source's `maxBatchSize`.
   * @default 1000
   */
  maxBatchSize?: number;
}

/** One column to fill, resolved for one entity. */
interface Fill {
  readonly column: ColumnMetadata;
  readonly mode: LeafMode;
  readonly key: string;
  readonly type: LeafIdPropertyType;
}

/**
 * The TypeORM subscriber that gives each inserted row its Leaf IDs: every `@LeafIdColumn`
 * (and every column named in `entities`) that has no value gets one from the `IdService`
 * (in-process `LeafModule`, or the remote `LeafClient` / `LeafClientModule`), before the
 * row is written, on `save`, `insert`, `upsert`, bulk calls, cascades and inside
 * transactions; a value the caller set is kept. When the ID source fails (mode not ready,
 * unknown tag, ...) the insert fails with its `LeafError`: no row is written without an ID.
 *
 * Register it on a DataSource (`dataSource.subscribers.push(subscriber)`), or let
 * `LeafTypeOrmModule` do it. Each instance belongs to one application.
 */
export class LeafIdSubscriber implements EntitySubscriberInterface {
  private readonly batcher: IdBatcher;
  private readonly plans = new WeakMap<EntityMetadata, readonly Fill[]>();

  /** @throws {LeafConfigurationError} on invalid options. */
  constructor(
    ids: IdService,
    private readonly options: LeafIdSubscriberOptions = {},
  ) {
    const max = options.maxBatchSize ?? DEFAULT_ORM_MAX_BATCH_SIZE;
    const problems = maxBatchSizeProblems(max);
    for (const entry of options.entities ?? [])
      if (typeof entry.entity !== 'function' && typeof entry.entity !== 'string')
        problems.push('entities[].entity must be an entity class or name');
    if (problems.length > 0) throw new LeafConfigurationError(problems);
    this.batcher = new IdBatcher(ids, max);
  }

  /**
   * Fills the row's empty ID columns.
   * @throws {LeafError} the ID source's error; `LeafConfigurationError` when a column has no mode.
   */
  async beforeInsert(event: InsertEvent<ObjectLiteral>): Promise<void> {
    const entity = event.entity as ObjectLiteral | undefined;
    if (!entity || !event.metadata) return;
    let fills = this.plans.get(event.metadata);
    if (!fills) this.plans.set(event.metadata, (fills = this.resolve(event.metadata)));
    const waiting: Promise<void>[] = [];
    for (const fill of fills) {
      const current: unknown = fill.column.getEntityValue(entity);
      if (current !== undefined && current !== null) continue;
      waiting.push(
        this.batcher.next(fill.mode, fill.key).then((id) => {
          fill.column.setEntityValue(entity, fill.type === 'bigint' ? id : id.toString());
        }),
      );
    }
    await Promise.all(waiting);
  }

  private resolve(metadata: EntityMetadata): readonly Fill[] {
    const overrides = (this.options.entities ?? []).filter(
      (entry) => entry.entity === metadata.target || entry.entity === metadata.name,
    );
    const fills: Fill[] = [];
    const problems: string[] = [];
    for (const column of metadata.columns) {
      const declared = leafIdColumnDeclaration(column.target, column.propertyName);
      const override = overrides.find((entry) =>
        entry.property === undefined
          ? column.isPrimary && metadata.primaryColumns.length === 1
          : entry.property === column.propertyPath,
      );
      if (!declared && !override) continue;
      const mode = override?.mode ?? declared?.mode ?? this.options.defaults?.mode;
      if (!mode) {
        problems.push(
          `${metadata.name}.${column.propertyPath} has no mode: give @LeafIdColumn({ mode }), an entities[] entry or defaults.mode`,
        );
        continue;
      }
      const key =
        override?.key ?? declared?.key ?? this.options.defaults?.key ?? metadata.tableName;
      fills.push({ column, mode, key, type: override?.type ?? declared?.type ?? 'string' });
    }
    for (const entry of overrides)
      if (entry.property && !metadata.columns.some((c) => c.propertyPath === entry.property))
        problems.push(`${metadata.name} has no column ${entry.property}`);
    if (problems.length > 0) throw new LeafConfigurationError(problems);
    return fills;
  }
}
