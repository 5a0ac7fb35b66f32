import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** The user's own table, created by `synchronize: true` next to leaf_alloc. */
@Entity({ name: 'consumer_note' })
export class NoteEntity {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 64 })
  text!: string;
}
