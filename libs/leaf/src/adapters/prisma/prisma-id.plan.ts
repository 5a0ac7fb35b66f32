import type { PrismaIdSchema, PrismaIdTarget } from './prisma-id.schema';

/** A step from an operation's `args` down to a row's data: a property name or an array index. */
export type PrismaArgsPath = readonly (string | number)[];

/** One row that needs its Leaf ID: the data object at `path` in the args, its model, its target. */
export interface PrismaIdHole {
  readonly path: PrismaArgsPath;
  readonly model: string;
  readonly target: PrismaIdTarget;
}

type Data = Record<string, unknown>;

function isData(value: unknown): value is Data {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value`, or each element of it when it is an array, with its path. */
function eachOf(value: unknown, path: PrismaArgsPath): [unknown, PrismaArgsPath][] {
  return Array.isArray(value)
    ? value.map((item, i): [unknown, PrismaArgsPath] => [item, [...path, i]])
    : [[value, path]];
}

/**
 * Walks an operation's args and lists, in order, every row it would create whose Leaf ID field
 * is empty (`undefined` or `null`; a value the caller set is kept): `create`'s data,
 * `createMany`'s and `createManyAndReturn`'s rows, `upsert`'s create branch, and the nested
 * writes of any of them and of `update`'s data, at any depth — relation `create`,
 * `createMany.data`, `connectOrCreate[].create`, and inside an update `upsert[].create` and
 * `update[].data`. Pure: reads the args, never changes them.
 */
export class PrismaIdPlanner {
  constructor(private readonly schema: PrismaIdSchema) {}

  /** The rows of `operation` on `model` that need an ID (none for an operation that creates none). */
  plan(model: string, operation: string, args: unknown): PrismaIdHole[] {
    const holes: PrismaIdHole[] = [];
    if (!isData(args)) return holes;
    switch (operation) {
      case 'create':
        this.created(model, args.data, ['data'], holes);
        break;
      case 'createMany':
      case 'createManyAndReturn':
        for (const [row, path] of eachOf(args.data, ['data']))
          this.created(model, row, path, holes);
        break;
      case 'upsert':
        this.created(model, args.create, ['create'], holes);
        this.updated(model, args.update, ['update'], holes);
        break;
      case 'update':
        this.updated(model, args.data, ['data'], holes);
        break;
    }
    return holes;
  }

  /** A row to create: its own ID, then its relations' nested writes. */
  private created(model: string, data: unknown, path: PrismaArgsPath, holes: PrismaIdHole[]) {
    if (!isData(data)) return;
    const target = this.schema.targets.get(model);
    if (target && (data[target.field] === undefined || data[target.field] === null))
      holes.push({ path, model, target });
    this.relations(model, data, path, holes, false);
  }

  /** An update's data: no ID of its own, but its relations may create rows. */
  private updated(model: string, data: unknown, path: PrismaArgsPath, holes: PrismaIdHole[]) {
    if (isData(data)) this.relations(model, data, path, holes, true);
  }

  /** The nested writes (`{ create, createMany, connectOrCreate, ... }`) of `data`'s relations. */
  private relations(
    model: string,
    data: Data,
    path: PrismaArgsPath,
    holes: PrismaIdHole[],
    inUpdate: boolean,
  ) {
    for (const [field, related] of this.schema.relations.get(model) ?? []) {
      const write = data[field];
      if (!isData(write)) continue;
      const base = [...path, field];
      for (const [row, at] of eachOf(write.create, [...base, 'create']))
        this.created(related, row, at, holes);
      if (isData(write.createMany))
        for (const [row, at] of eachOf(write.createMany.data, [...base, 'createMany', 'data']))
          this.created(related, row, at, holes);
      for (const [entry, at] of eachOf(write.connectOrCreate, [...base, 'connectOrCreate']))
        if (isData(entry)) this.created(related, entry.create, [...at, 'create'], holes);
      if (!inUpdate) continue;
      for (const [entry, at] of eachOf(write.upsert, [...base, 'upsert'])) {
        if (!isData(entry)) continue;
        this.created(related, entry.create, [...at, 'create'], holes);
        this.updated(related, entry.update, [...at, 'update'], holes);
      }
      for (const [entry, at] of eachOf(write.update, [...base, 'update'])) {
        // To-many: { where, data }; to-one: the data itself, or { where?, data }.
        const wrapped =
          isData(entry) &&
          'data' in entry &&
          Object.keys(entry).every((k) => k === 'where' || k === 'data');
        if (wrapped) this.updated(related, entry.data, [...at, 'data'], holes);
        else this.updated(related, entry, at, holes);
      }
    }
  }
}

/**
 * A copy of `args` with each hole's field set to its ID (`ids[i]` for `holes[i]`; a decimal
 * string for a `String` field). Only the objects and arrays on the holes' paths are copied:
 * the caller's own objects are never written to, so the same data can be passed again and
 * takes new IDs.
 */
export function withPrismaIds<T>(
  args: T,
  holes: readonly PrismaIdHole[],
  ids: readonly bigint[],
): T {
  const copies = new Set<unknown>();
  const copy = (value: unknown): unknown => {
    if (copies.has(value)) return value;
    const made = Array.isArray(value) ? [...value] : { ...(value as Data) };
    copies.add(made);
    return made;
  };
  const root = copy(args) as Data;
  holes.forEach((hole, i) => {
    let node = root as Record<string | number, unknown>;
    for (const step of hole.path) {
      const child = copy(node[step]);
      node[step] = child;
      node = child as Record<string | number, unknown>;
    }
    node[hole.target.field] = hole.target.type === 'bigint' ? ids[i] : ids[i].toString();
  });
  return root as T;
}
