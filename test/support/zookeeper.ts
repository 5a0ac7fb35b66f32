/**
 * ZooKeeper helpers shared by the e2e specs: an admin client and a recursive delete for
 * cleaning up a test namespace. (`fillSequence` and `zkCodeOf` live in the library's
 * `testing/`, as unit tests use them on the fake client too.)
 */
import { ZkError, type ZkClient } from '@app/leaf/core/zookeeper/zk-client.port';
import { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { zookeeperConnectString } from './services';

/** A connected client on the test ZooKeeper, for setting up and cleaning namespaces. Close it. */
export async function connectZookeeperAdmin(): Promise<ZookeeperClient> {
  const client = new ZookeeperClient({
    connect: zookeeperConnectString(),
    sessionTimeoutMs: 10_000,
  });
  try {
    await client.connect(10_000);
  } catch (error) {
    await client.close();
    throw error;
  }
  return client;
}

/**
 * Runs `use` with a fresh admin client and closes it: for long runs, where a client kept
 * idle for the whole run (tens of minutes on a loaded machine) can see its session expire.
 */
export async function withZookeeperAdmin<T>(
  use: (admin: ZookeeperClient) => Promise<T>,
): Promise<T> {
  const admin = await connectZookeeperAdmin();
  try {
    return await use(admin);
  } finally {
    await admin.close();
  }
}

/** Deletes `path` and everything below it; a missing node is fine. */
export async function deleteTree(client: ZkClient, path: string): Promise<void> {
  let children: string[];
  try {
    children = await client.getChildren(path);
  } catch (error) {
    if (error instanceof ZkError && error.zkCode === 'NO_NODE') return;
    throw error;
  }
  for (let i = 0; i < children.length; i += 200) {
    await Promise.all(
      children.slice(i, i + 200).map((child) => deleteTree(client, `${path}/${child}`)),
    );
  }
  await client.delete(path).catch((error: unknown) => {
    if (!(error instanceof ZkError && error.zkCode === 'NO_NODE')) throw error;
  });
}

/** Deletes every child of `parent` whose name starts with `prefix` (the contract suites' namespaces). */
export function deleteNamespaces(parent: string, prefix: string): Promise<void> {
  return withZookeeperAdmin(async (admin) => {
    for (const name of await admin.getChildren(parent).catch(() => [])) {
      if (name.startsWith(prefix)) await deleteTree(admin, `${parent}/${name}`);
    }
  });
}
