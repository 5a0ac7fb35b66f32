import { createHook } from 'node:async_hooks';

/**
 * One of Node's `process.nextTick` queue entries, taken when this module is imported and kept
 * for the life of the process (exported, so the module's exports hold it), so that
 * `nextTick` stays on V8's fast path. `main.ts` imports this module first, before anything
 * else is loaded, and so does the bare route the benchmarks compare against; null on a Node
 * that has no such entries.
 *
 * Why (docs/benchmarks.md, *Node's `nextTick` slow path, found and closed*): on Node 24,
 * `nextTick` builds each queue entry as an object literal with three computed symbol keys.
 * V8 remembers, per key, the hidden class ("map") the entry had when the key was added, and
 * holds those maps weakly. When a full garbage collection runs at a moment no entry is alive
 * — which the application's start-up reaches every time and a small process only sometimes
 * — the maps are collected, the next entry gets new ones, V8 marks three of the five keys
 * megamorphic, and from then on every `nextTick` adds them through the runtime: about 2 µs
 * of CPU per HTTP request (four ticks each), a tenth of a single-ID request. V8 never turns
 * feedback back to monomorphic, so it lasts until the process ends. One entry kept alive
 * keeps its maps, and with them the fast path.
 *
 * The entry is taken with an `async_hooks` init hook that is enabled for one `nextTick` call
 * and disabled at once: nothing else runs under it. One entry per process (a module is
 * evaluated once): two applications in one process share it, as they share `nextTick`. On a
 * Node whose entries are class instances (Node 20) it is kept just the same and changes
 * nothing: their class holds their map.
 */
export const keptNextTickEntry: object | null = (() => {
  let entry: object | null = null;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && entry === null) entry = resource as object;
    },
  });
  hook.enable();
  try {
    process.nextTick(() => undefined);
  } finally {
    hook.disable();
  }
  return entry;
})();
