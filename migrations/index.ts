import { CreateLeafAlloc1700000000000 } from './1700000000000-CreateLeafAlloc';

/** Every migration, in order. The app and the TypeORM CLI both use this list. */
export const LEAF_MIGRATIONS = [CreateLeafAlloc1700000000000];
