import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import type { LeafMode } from '../../core/id.service';
import {
  DEFAULT_ORM_MAX_BATCH_SIZE,
  idSourceProblems,
  maxBatchSizeProblems,
} from '../../core/orm/id-fill-options';

/** One model's Leaf ID in `leafPrismaIds(ids, { models: { Order: { ... } } })`. */
export interface LeafPrismaModelOptions {
  /** The field to fill: a `BigInt` field (a JS `bigint`), or a `String` one (a decimal string). @default 'id' */
  field?: string;
  /** The mode the IDs come from. @default `defaults.mode`, else 'segment' */
  mode?: LeafMode;
  /**
   * The key (segment tag, sequence key; ignored by snowflake).
   * @default `defaults.key`, else the model's table name (`@@map`), else the model's name
   */
  key?: string;
}

/** Options of `leafPrismaIds`. */
export interface LeafPrismaIdsOptions {
  /** The models whose IDs Leaf fills, by their name in the schema (`Order`, not `order`). */
  models: Readonly<Record<string, LeafPrismaModelOptions>>;
  /** What a model without its own `mode` or `key` takes. */
  defaults?: { mode?: LeafMode; key?: string };
  /**
   * The largest `getIds` count asked for at once: an operation with more rows of one mode and
   * key takes several calls. Keep it at or below the ID source's `maxBatchSize`.
   * @default 1000
   */
  maxBatchSize?: number;
  /**
   * The relation fields of each model and the model each leads to
   * (`{ Order: { lines: 'OrderLine' } }`), for nested writes. Needed only when the client
   * carries no data model (see `leafPrismaIds`); given, it wins over the data model's for the
   * models it names.
   * @default the client's data model
   */
  relations?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** A field of a model as the Prisma client's data model describes it (the part read here). */
export interface PrismaFieldShape {
  readonly name: string;
  /** `scalar`, `object` (a relation), `enum`. */
  readonly kind: string;
  /** The scalar type (`BigInt`, `String`) or, for a relation, the model it leads to. */
  readonly type: string;
}

/** The part of the Prisma client's data model read here: models by name. */
export interface PrismaDataModel {
  readonly models: Readonly<
    Record<
      string,
      { readonly dbName?: string | null; readonly fields: readonly PrismaFieldShape[] }
    >
  >;
}

/** Where one model's Leaf IDs go and where they come from, resolved. */
export interface PrismaIdTarget {
  readonly field: string;
  readonly mode: LeafMode;
  readonly key: string;
  /** `bigint` for a `BigInt` field, `string` (decimal) for a `String` one. */
  readonly type: 'bigint' | 'string';
}

/** What the planner needs: the models that take Leaf IDs, and every model's relations. */
export interface PrismaIdSchema {
  readonly targets: ReadonlyMap<string, PrismaIdTarget>;
  /** Per model: relation field → the model it leads to. */
  readonly relations: ReadonlyMap<string, ReadonlyMap<string, string>>;
  readonly maxBatchSize: number;
}

function relationsOf(
  dataModel: PrismaDataModel | undefined,
  given: LeafPrismaIdsOptions['relations'],
): Map<string, Map<string, string>> {
  const relations = new Map<string, Map<string, string>>();
  for (const [model, { fields }] of Object.entries(dataModel?.models ?? {}))
    relations.set(
      model,
      new Map(fields.filter((f) => f.kind === 'object').map((f) => [f.name, f.type])),
    );
  for (const [model, fields] of Object.entries(given ?? {}))
    relations.set(model, new Map(Object.entries(fields)));
  return relations;
}

function targetOf(
  model: string,
  options: LeafPrismaModelOptions,
  all: LeafPrismaIdsOptions,
  dataModel: PrismaDataModel | undefined,
  problems: string[],
): PrismaIdTarget | undefined {
  const where = `models.${model}`;
  const before = problems.length;
  problems.push(...idSourceProblems(where, options));
  const field = options.field ?? 'id';
  let type: PrismaIdTarget['type'] = 'bigint';
  const shape = dataModel?.models[model];
  if (dataModel && !shape) {
    problems.push(
      `${where}: the Prisma schema has no model ${model} (its models: ${Object.keys(dataModel.models).join(', ')})`,
    );
  } else if (shape) {
    const found = shape.fields.find((f) => f.name === field);
    if (!found) problems.push(`${where}: ${model} has no field ${field}`);
    else if (found.kind === 'object')
      problems.push(
        `${where}: ${model}.${field} is a relation (to ${found.type}), not an ID field`,
      );
    else if (found.kind !== 'scalar' || (found.type !== 'BigInt' && found.type !== 'String'))
      problems.push(
        `${where}: ${model}.${field} is ${found.type}: a Leaf ID needs a BigInt field (or a String one, for decimal strings)`,
      );
    else type = found.type === 'BigInt' ? 'bigint' : 'string';
  }
  if (problems.length > before) return undefined;
  return {
    field,
    mode: options.mode ?? all.defaults?.mode ?? 'segment',
    key: options.key ?? all.defaults?.key ?? shape?.dbName ?? model,
    type,
  };
}

/**
 * Resolves `leafPrismaIds`'s options against the client's data model (`undefined` when the
 * client carries none: then `relations` must say where nested writes lead, and every field is
 * taken for a `BigInt`).
 * @throws {LeafConfigurationError} listing every problem: an unknown model or field, a field
 *   that is neither `BigInt` nor `String`, an unknown mode, an empty key, a bad
 *   `maxBatchSize`, no data model and no `relations`.
 */
export function resolvePrismaIdSchema(
  options: LeafPrismaIdsOptions,
  dataModel: PrismaDataModel | undefined,
): PrismaIdSchema {
  const maxBatchSize = options.maxBatchSize ?? DEFAULT_ORM_MAX_BATCH_SIZE;
  const problems = [
    ...maxBatchSizeProblems(maxBatchSize),
    ...idSourceProblems('defaults', options.defaults ?? {}),
  ];
  const models = Object.entries(options.models ?? {});
  if (models.length === 0) problems.push('models must name at least one model');
  if (!dataModel && options.relations === undefined)
    problems.push(
      'the Prisma client carries no data model: give relations ({ Order: { lines: "OrderLine" } }, {} when no nested writes) so that nested creates get their IDs',
    );
  for (const [model, fields] of Object.entries(options.relations ?? {}))
    for (const [field, target] of Object.entries(fields))
      if (dataModel && !dataModel.models[target])
        problems.push(`relations.${model}.${field}: the Prisma schema has no model ${target}`);
  const targets = new Map<string, PrismaIdTarget>();
  for (const [model, entry] of models) {
    const target = targetOf(model, entry ?? {}, options, dataModel, problems);
    if (target) targets.set(model, target);
  }
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return { targets, relations: relationsOf(dataModel, options.relations), maxBatchSize };
}
