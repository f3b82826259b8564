/**
 * A bounded async pool: `concurrency` slots take items in order until none are left or `stop()` says so. The first
 * error stops the other slots from taking new items and is rethrown once every slot has settled, so no work is left
 * running behind the caller's back.
 */
export async function runPool<T>(
  items: readonly T[] | Iterator<T>,
  concurrency: number,
  worker: (item: T, slot: number) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<void> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  // An iterator is pulled one item at a time as a slot frees (a file read as it is asked, app/mc-evaluation/run.ts);
  // an error of the iterator is the pool's first error.
  const list = Array.isArray(items) ? (items as readonly T[]) : null;
  const iterator = list ? null : (items as Iterator<T>);
  let next = 0;
  let exhausted = false;
  let failure: { error: unknown } | null = null;
  const take = (): { item: T } | null => {
    if (list) return next < list.length ? { item: list[next++] as T } : null;
    if (exhausted) return null;
    const r = iterator!.next();
    if (r.done) {
      exhausted = true;
      return null;
    }
    return { item: r.value };
  };
  const slot = async (index: number) => {
    while (failure === null && !stop()) {
      let taken: { item: T } | null;
      try {
        taken = take();
      } catch (error) {
        exhausted = true;
        failure ??= { error };
        return;
      }
      if (taken === null) return;
      try {
        await worker(taken.item, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const slots = list ? Math.min(concurrency, list.length) : concurrency;
  await Promise.all(Array.from({ length: slots }, (_, i) => slot(i)));
  if (failure !== null) throw (failure as { error: unknown }).error;
}

/**
 * Chains of dependent calls (an evaluation case: model, judge, model, …) on `concurrency` slots, scheduled call by
 * call: a slot that frees takes the ready chain that `before` puts first, not necessarily the one it just served.
 * Up to `openLimit` chains are open at once, admitted in the order given. `step` makes one call of a chain and says
 * whether the chain has another.
 *
 * Why: with one slot per chain, the run ends waiting on whichever long chains started last. Taking first the chain
 * with the most calls possibly left (highest level first, optimal for chains of equal-length calls when the lengths
 * are known) and keeping a few chains per slot open lets the last rounds stay full (docs/evaluation.md, "Scale").
 * Errors behave as in runPool: the first one stops new calls and is rethrown once every call in flight has settled.
 */
export async function runChains<T>(
  chains: readonly T[],
  options: { concurrency: number; openLimit: number; before: (a: T, b: T) => boolean },
  step: (chain: T) => Promise<boolean>,
  stop: () => boolean = () => false,
): Promise<void> {
  const { concurrency, openLimit } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  const ready = new Heap(options.before);
  let admitted = 0;
  let open = 0;
  let inFlight = 0;
  let failure: { error: unknown } | null = null;
  await new Promise<void>((resolve) => {
    const pump = () => {
      while (failure === null && !stop() && inFlight < concurrency) {
        while (admitted < chains.length && open < Math.max(openLimit, concurrency)) {
          ready.push(chains[admitted++]);
          open++;
        }
        const chain = ready.pop();
        if (chain === undefined) break;
        inFlight++;
        step(chain).then(
          (more) => {
            inFlight--;
            if (more) ready.push(chain);
            else open--;
            pump();
          },
          (error: unknown) => {
            inFlight--;
            open--;
            failure ??= { error };
            pump();
          },
        );
      }
      if (inFlight === 0) resolve();
    };
    pump();
  });
  if (failure !== null) throw (failure as { error: unknown }).error;
}

/** A binary heap: `pop` returns the item that `before` puts ahead of every other. */
class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly before: (a: T, b: T) => boolean) {}

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(a[i], a[parent])) break;
      [a[i], a[parent]] = [a[parent], a[i]];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop() as T;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < a.length && this.before(a[l], a[best])) best = l;
        if (r < a.length && this.before(a[r], a[best])) best = r;
        if (best === i) break;
        [a[i], a[best]] = [a[best], a[i]];
        i = best;
      }
    }
    return top;
  }
}
