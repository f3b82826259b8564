/**
 * `runPool` over an iterator (app/model-calls/pool.ts): items are pulled one at a time as a slot frees, so a run
 * that reads its items as it asks them holds only those in flight (docs/reliability.md, "Memory bounded by the
 * longest line"); an error of the iterator is the pool's error, thrown once the slots have settled.
 */
import { describe, expect, it } from "vitest";
import { runPool } from "../../app/model-calls/pool";

const tick = () => new Promise((r) => setTimeout(r, 1));

describe("runPool over an iterator", () => {
  it("pulls an item only when a slot frees, in order, and works each once", async () => {
    let pulled = 0;
    let inFlight = 0;
    let mostAhead = 0;
    const worked: number[] = [];
    function* items() {
      for (let i = 0; i < 50; i++) {
        pulled++;
        yield i;
      }
    }
    await runPool(items(), 3, async (i) => {
      inFlight++;
      mostAhead = Math.max(mostAhead, pulled - worked.length);
      await tick();
      worked.push(i);
      inFlight--;
    });
    expect(worked.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    // Never more items taken from the iterator than the three slots are working on.
    expect(mostAhead).toBeLessThanOrEqual(3);
    expect(inFlight).toBe(0);
  });

  it("rethrows the iterator's error after the items in flight have settled", async () => {
    const settled: number[] = [];
    function* items() {
      yield 1;
      yield 2;
      throw new Error("the file changed");
    }
    await expect(
      runPool(items(), 2, async (i) => {
        await tick();
        settled.push(i);
      }),
    ).rejects.toThrow("the file changed");
    expect(settled.sort()).toEqual([1, 2]);
  });
});
