/**
 * The ORM example of docs/public-ids.md ("In an ORM"), run on real PostgreSQL with TypeORM:
 * the public ID is derived from the primary key on read (`@AfterLoad`), never stored (the
 * table has no column for it), and a route taking a public ID finds the row by decoding it.
 * Rows written under one key version still load and look up after a rotation; a retired
 * version is refused with its typed error.
 */
import { OpaqueKeyRetiredError } from 'nestjs-leaf/errors';
import { OpaqueIds } from 'nestjs-leaf/formats';
import { AfterLoad, Column, DataSource, Entity, PrimaryColumn, type Repository } from 'typeorm';
import { createPostgresTestDatabase, type PostgresTestDatabase } from './support/postgres-database';
import { describeWithServices } from './support/services';

const K1 = Buffer.alloc(16, 0x41);
const K2 = Buffer.alloc(16, 0x42);
/** The application's key ring (as `LeafModule`'s `opaque.keys` would give it). */
let opaque = new OpaqueIds([{ version: 1, key: K1 }]);

const asBigint = {
  to: (value: bigint) => value,
  from: (value: string) => BigInt(value), // pg returns BIGINT as a string: never a Number
};

@Entity({ name: 'public_orders' })
class Order {
  @PrimaryColumn({ type: 'bigint', transformer: asBigint }) id!: bigint;
  @Column({ type: 'varchar', length: 64 }) reference!: string;
  /** Not a column: derived on read. */
  publicId?: string;
  @AfterLoad() derivePublicId() {
    this.publicId = opaque.encode(this.id);
  }
}

describeWithServices(['postgres'], 'public IDs derived on read (TypeORM, PostgreSQL)', () => {
  let db: PostgresTestDatabase;
  let dataSource: DataSource;
  let orders: Repository<Order>;
  const byPublicId = (text: string) => orders.findOneBy({ id: opaque.decode(text) });

  beforeAll(async () => {
    db = await createPostgresTestDatabase();
    dataSource = await db.openDataSource({
      overrides: { entities: [Order], synchronize: true, migrations: [] },
    });
    orders = dataSource.getRepository(Order);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('derives the public ID from the key on read and finds rows by it; nothing stored twice', async () => {
    const ids = [1n, 2n, 2128094966440788019n, 9223372036854775807n];
    await orders.insert(ids.map((id) => ({ id, reference: `ref-${id}` })));
    const columns = await db.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'public_orders' ORDER BY 1",
    );
    expect(columns.map((c) => c.column_name)).toEqual(['id', 'reference']);

    const loaded = await orders.find({ order: { id: 'ASC' } });
    expect(loaded.map((o) => o.id)).toEqual(ids);
    expect(loaded.map((o) => o.publicId)).toEqual(ids.map((id) => opaque.encode(id)));
    for (const order of loaded) {
      expect(await byPublicId(order.publicId!)).toMatchObject({
        id: order.id,
        publicId: order.publicId,
      });
    }
    const before = loaded[2]!.publicId!;

    // A rotation: v2 writes, v1 still reads; the same row gets a new public ID.
    opaque = new OpaqueIds([
      { version: 1, key: K1 },
      { version: 2, key: K2 },
    ]);
    const reloaded = (await byPublicId(before))!;
    expect(reloaded.id).toBe(ids[2]);
    expect(reloaded.publicId).not.toBe(before);
    expect((await byPublicId(reloaded.publicId!))!.id).toBe(ids[2]);

    // v1 retired: its texts are refused with the typed error (decoded before any query).
    opaque = new OpaqueIds([{ version: 2, key: K2 }]);
    expect(() => opaque.decode(before)).toThrow(OpaqueKeyRetiredError);
    await expect(Promise.resolve().then(() => byPublicId(before))).rejects.toBeInstanceOf(
      OpaqueKeyRetiredError,
    );
  });
});
