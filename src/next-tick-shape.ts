import { createHook } from 'node:async_hooks';

// One nextTick queue entry kept alive: a full GC with none alive slows V8's nextTick for good (Node 24).
// Without it: 9.1 % more CPU per request (docs/benchmarks.md, "Node's `nextTick` slow path").
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
