import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PyRandom } from "~/python-compat/random";

// expected.json was produced by CPython 3.11.7 running test/fixtures/py-random/generate.py (standard library
// `random.Random`): `python3 test/fixtures/py-random/generate.py > test/fixtures/py-random/expected.json`.
// Seeds are stored as decimal strings so that seeds above 2**53 survive JSON.
interface Fixture {
  python_version: string;
  random: { seed: string; values: number[] }[];
  random_long: { seed: string; every_50th: number[]; last: number };
  getrandbits: { seed: string; ks: number[]; values: string[] }[];
  randbelow: { seed: string; ns: string[]; values: string[] }[];
  shuffle: { seed: string; n: number; result: number[] }[];
  consecutive_shuffles: { n: number; result: number[] }[];
  after_consecutive_shuffles_random: number;
}

const fixture = JSON.parse(
  readFileSync(new URL("../fixtures/py-random/expected.json", import.meta.url), "utf8"),
) as Fixture;

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("PyRandom replays CPython's random.Random", () => {
  it("was checked against CPython 3.11", () => expect(fixture.python_version).toMatch(/^3\.11\./));

  for (const { seed, values } of fixture.random) {
    it(`random() for seed ${seed}: first 20 values are bit-identical`, () => {
      const rng = new PyRandom(BigInt(seed));
      expect(values.map(() => rng.random())).toEqual(values);
    });
  }

  it("random() keeps matching after the state is regenerated (700 draws)", () => {
    const rng = new PyRandom(BigInt(fixture.random_long.seed));
    const draws = range(700).map(() => rng.random());
    expect(draws.filter((_, i) => i % 50 === 0)).toEqual(fixture.random_long.every_50th);
    expect(draws[699]).toBe(fixture.random_long.last);
  });

  it("accepts number and bigint seeds alike, and a negative seed as its absolute value", () => {
    const a = new PyRandom(42);
    const b = new PyRandom(42n);
    const c = new PyRandom(-42);
    const values = range(5).map(() => a.random());
    expect(range(5).map(() => b.random())).toEqual(values);
    expect(range(5).map(() => c.random())).toEqual(values);
  });

  it("re-seeding restarts the sequence", () => {
    const rng = new PyRandom(1);
    const first = rng.random();
    rng.random();
    rng.seed(1);
    expect(rng.random()).toBe(first);
  });

  it("refuses seeds it cannot replay", () => {
    expect(() => new PyRandom(1.5)).toThrow(/integer/);
    expect(() => new PyRandom(2 ** 60)).toThrow(/integer/);
  });

  for (const { seed, ks, values } of fixture.getrandbits) {
    it(`getrandbits(k) for seed ${seed} and k in ${ks.join(",")}`, () => {
      const rng = new PyRandom(BigInt(seed));
      expect(ks.map((k) => rng.getrandbits(k).toString())).toEqual(values);
    });
  }

  for (const { seed, ns, values } of fixture.randbelow) {
    it(`_randbelow(n) for seed ${seed}, n up to 2**53 - 1`, () => {
      const rng = new PyRandom(BigInt(seed));
      expect(ns.map((n) => String(rng.randbelow(Number(n))))).toEqual(values);
    });
  }

  for (const { seed, n, result } of fixture.shuffle) {
    it(`shuffle(range(${n})) with seed ${seed}`, () => {
      const items = range(n);
      new PyRandom(BigInt(seed)).shuffle(items);
      expect(items).toEqual(result);
    });
  }

  it("consecutive shuffles on one generator, then random()", () => {
    const rng = new PyRandom(123);
    for (const { n, result } of fixture.consecutive_shuffles) {
      const items = range(n);
      rng.shuffle(items);
      expect(items).toEqual(result);
    }
    expect(rng.random()).toBe(fixture.after_consecutive_shuffles_random);
  });
});
