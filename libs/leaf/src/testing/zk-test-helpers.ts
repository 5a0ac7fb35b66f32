import { ZkError, type ZkClient } from '../core/zookeeper/zk-client.port';

/** Resolves with the ZkError code of a rejection; throws on success or on any other error. */
export async function zkCodeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ZkError) return error.zkCode;
    throw error;
  }
  throw new Error('expected a ZkError rejection');
}

/**
 * Creates `count` persistent sequential children of `parent` (as that many other instances
 * would), so the next sequential node gets sequence `count`. Creates `parent` if needed.
 */
export async function fillSequence(client: ZkClient, parent: string, count: number): Promise<void> {
  await client.mkdirp(parent);
  for (let i = 0; i < count; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, count - i) }, (_, k) =>
        client.createPersistentSequential(
          `${parent}/10.9.${(i + k) >> 8}.${(i + k) & 255}:1-`,
          Buffer.from('{}'),
        ),
      ),
    );
  }
}
