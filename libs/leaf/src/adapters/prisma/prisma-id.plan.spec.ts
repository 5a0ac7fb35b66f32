/**
 * Which rows of a Prisma operation's args need a Leaf ID, and the args with the IDs set, with
 * no Prisma and no database: the data model is the shape the generated client carries.
 */
import { PrismaIdPlanner, withPrismaIds, type PrismaIdHole } from './prisma-id.plan';
import { resolvePrismaIdSchema, type PrismaDataModel } from './prisma-id.schema';

const scalar = (name: string, type = 'String') => ({ name, kind: 'scalar', type });
const relation = (name: string, type: string) => ({ name, kind: 'object', type });

/** Customer 1-n Order 1-n OrderLine 1-n Note; Order n-1 Address (to-one); Tag has an Int id. */
const DATA_MODEL: PrismaDataModel = {
  models: {
    Customer: { dbName: 'customers', fields: [scalar('id', 'Int'), relation('orders', 'Order')] },
    Order: {
      dbName: 'orders',
      fields: [
        scalar('id', 'BigInt'),
        scalar('name'),
        relation('lines', 'OrderLine'),
        relation('address', 'Address'),
        relation('customer', 'Customer'),
      ],
    },
    OrderLine: {
      dbName: 'order_lines',
      fields: [scalar('id', 'BigInt'), scalar('sku'), relation('notes', 'Note')],
    },
    Note: { dbName: null, fields: [scalar('ref'), scalar('text')] },
    Address: { fields: [scalar('id', 'BigInt'), scalar('city')] },
    Tag: { fields: [scalar('id', 'Int')] },
  },
};

const schema = resolvePrismaIdSchema(
  {
    models: {
      Order: {},
      OrderLine: { key: 'order-lines' },
      Note: { field: 'ref', mode: 'snowflake' },
      Address: {},
    },
  },
  DATA_MODEL,
);
const planner = new PrismaIdPlanner(schema);

/** `path -> model` of each hole, for short expectations. */
function holes(model: string, operation: string, args: unknown): string[] {
  return planner
    .plan(model, operation, args)
    .map((hole) => `${hole.path.join('.') || '(root)'} ${hole.model}`);
}

describe('resolvePrismaIdSchema', () => {
  it('takes the field type from the data model, the key from the table name, the mode from the defaults', () => {
    expect(Object.fromEntries(schema.targets)).toEqual({
      Order: { field: 'id', mode: 'segment', key: 'orders', type: 'bigint' },
      OrderLine: { field: 'id', mode: 'segment', key: 'order-lines', type: 'bigint' },
      Note: { field: 'ref', mode: 'snowflake', key: 'Note', type: 'string' },
      Address: { field: 'id', mode: 'segment', key: 'Address', type: 'bigint' },
    });
    expect(schema.maxBatchSize).toBe(1000);
    expect(Object.fromEntries(schema.relations.get('Order')!)).toEqual({
      lines: 'OrderLine',
      address: 'Address',
      customer: 'Customer',
    });
    const withDefaults = resolvePrismaIdSchema(
      { models: { Order: {} }, defaults: { mode: 'sequence', key: 'all' }, maxBatchSize: 50 },
      DATA_MODEL,
    );
    expect(withDefaults.targets.get('Order')).toMatchObject({ mode: 'sequence', key: 'all' });
    expect(withDefaults.maxBatchSize).toBe(50);
  });

  it('lists every problem in one LeafConfigurationError', () => {
    let error: unknown;
    try {
      resolvePrismaIdSchema(
        {
          models: {
            Ordr: {},
            Order: { field: 'name', mode: 'bogus' as never, key: '' },
            OrderLine: { field: 'sku2' },
            Customer: { field: 'orders' },
            Tag: {},
          },
          maxBatchSize: 0,
          relations: { Order: { lines: 'Nope' } },
        },
        DATA_MODEL,
      );
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'LEAF_CONFIGURATION' });
    expect((error as { problems: string[] }).problems).toEqual([
      'maxBatchSize must be a positive integer, not 0',
      'relations.Order.lines: the Prisma schema has no model Nope',
      'models.Ordr: the Prisma schema has no model Ordr (its models: Customer, Order, OrderLine, Note, Address, Tag)',
      'models.Order mode must be segment, snowflake or sequence, not bogus',
      'models.Order key must not be empty',
      'models.OrderLine: OrderLine has no field sku2',
      'models.Customer: Customer.orders is a relation (to Order), not an ID field',
      'models.Tag: Tag.id is Int: a Leaf ID needs a BigInt field (or a String one, for decimal strings)',
    ]);
  });

  it('without a data model: relations must be given; fields are taken for BigInt, keys are model names', () => {
    expect(() => resolvePrismaIdSchema({ models: { Order: {} } }, undefined)).toThrow(
      /carries no data model: give relations/,
    );
    const explicit = resolvePrismaIdSchema(
      { models: { Order: {}, OrderLine: {} }, relations: { Order: { lines: 'OrderLine' } } },
      undefined,
    );
    expect(explicit.targets.get('Order')).toEqual({
      field: 'id',
      mode: 'segment',
      key: 'Order',
      type: 'bigint',
    });
    expect(
      new PrismaIdPlanner(explicit).plan('Order', 'create', {
        data: { name: 'a', lines: { create: [{ sku: 'x' }] } },
      }),
    ).toHaveLength(2);
  });

  it('refuses an empty model list', () => {
    expect(() => resolvePrismaIdSchema({ models: {} }, DATA_MODEL)).toThrow(
      /models must name at least one model/,
    );
  });
});

describe('PrismaIdPlanner', () => {
  it('create: the row, and its nested creates at any depth (create, createMany, connectOrCreate; to-one)', () => {
    expect(
      holes('Order', 'create', {
        data: {
          name: 'a',
          address: { create: { city: 'x' } },
          lines: {
            create: [
              { sku: 'a', notes: { create: { text: 'n1' } } },
              {
                id: 7n,
                sku: 'b',
                notes: { createMany: { data: [{ text: 'n2' }, { ref: 'r', text: 'n3' }] } },
              },
            ],
            createMany: { data: { sku: 'c' } },
            connectOrCreate: [{ where: { id: 1n }, create: { sku: 'd' } }],
          },
        },
        include: { lines: true },
      }),
    ).toEqual([
      'data Order',
      'data.lines.create.0 OrderLine',
      'data.lines.create.0.notes.create Note',
      'data.lines.create.1.notes.createMany.data.0 Note',
      'data.lines.createMany.data OrderLine',
      'data.lines.connectOrCreate.0.create OrderLine',
      'data.address.create Address',
    ]);
  });

  it('a model without a Leaf ID is walked for its relations only', () => {
    expect(
      holes('Customer', 'create', { data: { orders: { create: [{ name: 'a' }, { name: 'b' }] } } }),
    ).toEqual(['data.orders.create.0 Order', 'data.orders.create.1 Order']);
    expect(holes('Tag', 'create', { data: {} })).toEqual([]);
  });

  it('createMany and createManyAndReturn: each row without an ID (one object or an array)', () => {
    expect(
      holes('Order', 'createMany', {
        data: [{ name: 'a' }, { id: 5n, name: 'b' }, { id: null, name: 'c' }],
      }),
    ).toEqual(['data.0 Order', 'data.2 Order']);
    expect(holes('OrderLine', 'createManyAndReturn', { data: { sku: 'a' } })).toEqual([
      'data OrderLine',
    ]);
  });

  it("upsert: the create branch's row; the update branch's nested creates", () => {
    expect(
      holes('Order', 'upsert', {
        where: { id: 1n },
        create: { name: 'a', lines: { create: { sku: 'x' } } },
        update: { name: 'b', lines: { create: { sku: 'y' } } },
      }),
    ).toEqual(['create Order', 'create.lines.create OrderLine', 'update.lines.create OrderLine']);
  });

  it("update: no ID for the updated row; its nested creates, upserts and updates' creates", () => {
    expect(
      holes('Order', 'update', {
        where: { id: 1n },
        data: {
          name: 'b',
          lines: {
            upsert: [
              {
                where: { id: 2n },
                create: { sku: 'u' },
                update: { notes: { create: { text: 'n' } } },
              },
            ],
            update: { where: { id: 3n }, data: { notes: { create: [{ text: 'm' }] } } },
            deleteMany: {},
          },
          address: {
            update: { city: 'y' },
            upsert: { create: { city: 'z' }, update: { city: 'z' } },
          },
        },
      }),
    ).toEqual([
      'data.lines.upsert.0.create OrderLine',
      'data.lines.upsert.0.update.notes.create Note',
      'data.lines.update.data.notes.create.0 Note',
      'data.address.upsert.create Address',
    ]);
  });

  it('reads, deletes and updateMany create nothing; odd args are passed over', () => {
    for (const operation of ['findMany', 'delete', 'updateMany', 'count'])
      expect(holes('Order', operation, { data: { name: 'a' }, where: {} })).toEqual([]);
    expect(holes('Order', 'create', undefined)).toEqual([]);
    expect(holes('Order', 'create', { data: 'nonsense' })).toEqual([]);
    expect(holes('Unknown', 'create', { data: { name: 'a' } })).toEqual([]);
  });
});

describe('withPrismaIds', () => {
  it('sets each ID (a bigint, or a decimal string for a String field) on a copy, leaving the caller’s args alone', () => {
    const line = { sku: 'a', notes: { create: { text: 'n' } } };
    const args = {
      data: { name: 'a', lines: { create: [line, { sku: 'b' }] } },
      include: { lines: true },
    };
    const before = JSON.stringify(args);
    const planned: PrismaIdHole[] = planner.plan('Order', 'create', args);
    const filled = withPrismaIds(args, planned, [10n, 20n, 9_007_199_254_740_993n, 21n]);
    expect(filled).toEqual({
      data: {
        id: 10n,
        name: 'a',
        lines: {
          create: [
            { id: 20n, sku: 'a', notes: { create: { ref: '9007199254740993', text: 'n' } } },
            { id: 21n, sku: 'b' },
          ],
        },
      },
      include: { lines: true },
    });
    expect(JSON.stringify(args)).toBe(before);
    expect(filled.include).toBe(args.include); // what holds no row is shared, not copied
  });
});
