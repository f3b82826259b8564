/**
 * A bounded async pool: `concurrency` slots take items in order until none are left or `stop()` says so. The first
 * error stops the other slots from taking new items and is rethrown once every slot has settled, so no work is left
 * running behind the caller's back.
 */
export async function runPool<T>(
  items: readonly T[],
  concurrency: number,
  worker: (item: T, slot: number) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<void> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  let next = 0;
  let failure: { error: unknown } | null = null;
  const slot = async (index: number) => {
    while (failure === null && !stop() && next < items.length) {
      const item = items[next++];
      try {
        await worker(item, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, (_, i) => slot(i)));
  if (failure !== null) throw (failure as { error: unknown }).error;
}
