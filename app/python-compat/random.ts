/**
 * An exact replay of CPython's `random.Random` for integer seeds (Modules/_randommodule.c and Lib/random.py,
 * CPython 3.11): the Mersenne Twister MT19937 seeded with `init_by_array` from the 32-bit words of |seed|,
 * `random()` as 53-bit floats, `getrandbits(k)`, `_randbelow` by rejection sampling on `getrandbits`, and the
 * Fisher–Yates `shuffle` of Lib/random.py.
 *
 * Needed because the reference implementation draws its validation set and orders its cases with
 * `random.Random(seed).shuffle` (docs/formats.md#python-compatible-behaviours, docs/judge-validation.md#sampling): replaying its selection requires the same generator.
 *
 * @example
 * new PyRandom(42).random(); // 0.6394267984578837, as Python's random.Random(42).random()
 */

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;

export type PySeed = number | bigint;

export class PyRandom {
  private readonly mt = new Uint32Array(N);
  private mti = N + 1;

  constructor(seed: PySeed) {
    this.seed(seed);
  }

  /**
   * `random.seed(n)` for an integer n: CPython takes |n| and feeds its 32-bit words, least significant first
   * (one zero word for 0), to `init_by_array`. Strings, bytes, floats and `None` seeds are not supported.
   */
  seed(seed: PySeed): void {
    if (typeof seed === "number" && !Number.isSafeInteger(seed)) {
      throw new RangeError(`PyRandom.seed requires an integer (a safe integer or a bigint), got ${seed}`);
    }
    let n = BigInt(seed);
    if (n < 0n) n = -n;
    const key: number[] = [];
    do {
      key.push(Number(n & 0xffffffffn));
      n >>= 32n;
    } while (n > 0n);
    this.initByArray(key);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.mti = N;
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  /** The next 32-bit output of MT19937 (`genrand_uint32`). */
  private nextUint32(): number {
    const mt = this.mt;
    if (this.mti >= N) {
      let kk = 0;
      for (; kk < N - M; kk++) {
        const y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
        mt[kk] = mt[kk + M] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      }
      for (; kk < N - 1; kk++) {
        const y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
        mt[kk] = mt[kk + (M - N)] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      }
      const y = (mt[N - 1] & UPPER_MASK) | (mt[0] & LOWER_MASK);
      mt[N - 1] = mt[M - 1] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      this.mti = 0;
    }
    let y = mt[this.mti++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random()`: a float in [0, 1) with 53 random bits, built from two 32-bit outputs (27 + 26 bits). */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /**
   * `getrandbits(k)`: an integer with k random bits. Words are drawn least significant first; the last
   * (most significant) word keeps its top bits, as CPython does. Returned as a bigint for any k.
   */
  getrandbits(k: number): bigint {
    if (!Number.isInteger(k) || k < 0) throw new RangeError(`getrandbits requires a non-negative integer, got ${k}`);
    if (k <= 32) return BigInt(this.getrandbits32(k));
    let result = 0n;
    let shift = 0n;
    for (let remaining = k; remaining > 0; remaining -= 32) {
      let word = this.nextUint32();
      if (remaining < 32) word >>>= 32 - remaining;
      result |= BigInt(word) << shift;
      shift += 32n;
    }
    return result;
  }

  private getrandbits32(k: number): number {
    if (k === 0) return 0;
    return this.nextUint32() >>> (32 - k);
  }

  /**
   * `_randbelow(n)` (`_randbelow_with_getrandbits`): k = n.bit_length(), draw k bits until the value is below n.
   * Note k is n's bit length, not (n − 1)'s, so a power of two rejects half of the draws, exactly as CPython.
   */
  randbelow(n: number): number {
    if (!Number.isSafeInteger(n) || n <= 0) {
      throw new RangeError(`randbelow requires a positive safe integer, got ${n}`);
    }
    const k = n.toString(2).length;
    if (k <= 32) {
      let r = this.getrandbits32(k);
      while (r >= n) r = this.getrandbits32(k);
      return r;
    }
    const big = BigInt(n);
    let r = this.getrandbits(k);
    while (r >= big) r = this.getrandbits(k);
    return Number(r);
  }

  /** `shuffle(x)` in place, CPython 3.11: for i from len−1 down to 1, swap x[i] with x[randbelow(i + 1)]. */
  shuffle<T>(items: T[]): void {
    for (let i = items.length - 1; i >= 1; i--) {
      const j = this.randbelow(i + 1);
      const tmp = items[i];
      items[i] = items[j];
      items[j] = tmp;
    }
  }
}
