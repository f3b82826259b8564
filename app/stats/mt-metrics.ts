/**
 * BLEU and chrF as sacreBLEU computes them with its defaults (docs/preparation.md, "Quality"), written from the
 * metrics' definitions: BLEU (Papineni et al. 2002) over the tokens of the mteval-v13a tokenisation, four n-gram
 * orders, the brevity penalty against the one reference, and the NIST "exp" smoothing of an order with no match
 * (Chen and Cherry 2014, method 3); chrF (Popović 2015) over character n-grams of orders 1 to 6 with white space
 * left out, word order 0 and β = 2, the precisions and recalls averaged over the orders both sides have.
 *
 * Sentence-level BLEU uses the effective order (orders the hypothesis has no n-gram of are left out), as sacreBLEU's
 * `sentence_bleu` does; corpus-level BLEU and chrF add up the segments' counts before the score, as `corpus_bleu`
 * and `corpus_chrf` do. Scores are on sacreBLEU's scale, 0 to 100.
 *
 * Equality with sacreBLEU is checked on fixtures that sacreBLEU's own code computed
 * (test/fixtures/preparation/make-mt-metrics.py, test/unit/mt-metrics.test.ts). Text is handled by code point, as
 * Python strings are, and "white space" is what Python's `str.split()` splits on.
 */

/** The characters Python's str.split() and str.rstrip() treat as white space. */
const PY_SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_SPACES = new RegExp(`[${PY_SPACE}]+`, "u");
const PY_TRAILING_SPACE = new RegExp(`[${PY_SPACE}]+$`, "u");
const PY_SPACES_GLOBAL = new RegExp(`[${PY_SPACE}]+`, "gu");

/** Python's `str.split()` without arguments: runs of white space separate, none at either end. */
export function pySplit(text: string): string[] {
  return text.split(PY_SPACES).filter((t) => t !== "");
}

/**
 * The mteval-v13a tokenisation: `<skipped>` and hyphenated line ends dropped, line ends made spaces, four HTML
 * entities decoded, then punctuation and symbols set apart (a period or comma only when not between digits, a dash
 * after a digit), and single spaces between tokens.
 */
export function tokenize13a(line: string): string {
  let s = line.replaceAll("<skipped>", "").replaceAll("-\n", "").replaceAll("\n", " ");
  if (s.includes("&"))
    s = s.replaceAll("&quot;", '"').replaceAll("&amp;", "&").replaceAll("&lt;", "<").replaceAll("&gt;", ">");
  s = ` ${s} `;
  // ASCII symbols: { | } ~, [ \ ] ^ _ `, space to &, ( ) * +, : ; < = > ? @, and /.
  s = s.replace(/([{-~[-`\x20-&(-+:-@/])/g, " $1 ");
  s = s.replace(/([^0-9])([.,])/gu, "$1 $2 ");
  s = s.replace(/([.,])([^0-9])/gu, " $1 $2");
  s = s.replace(/([0-9])(-)/g, "$1 $2 ");
  return pySplit(s).join(" ");
}

const MAX_ORDER = 4;

/** A segment's BLEU counts: its length, the reference's, and per order the matched and the hypothesis's n-grams. */
export interface BleuStats {
  hypLen: number;
  refLen: number;
  correct: number[];
  total: number[];
}

/**
 * Per order 1…4, each n-gram of the tokens with its count. An n-gram's key is its tokens joined by one space, taken as
 * a slice of the tokenised line (whose tokens are single-space separated), which is much cheaper than joining.
 */
function wordNgrams(tokenised: string): { counts: Map<string, number>[]; length: number } {
  const starts: number[] = [];
  const ends: number[] = [];
  const re = /[^ ]+/g;
  for (let m = re.exec(tokenised); m; m = re.exec(tokenised)) {
    starts.push(m.index);
    ends.push(m.index + m[0].length);
  }
  const counts: Map<string, number>[] = [];
  for (let n = 1; n <= MAX_ORDER; n++) {
    const order = new Map<string, number>();
    for (let i = 0; i + n <= starts.length; i++) {
      const key = tokenised.slice(starts[i], ends[i + n - 1]);
      order.set(key, (order.get(key) ?? 0) + 1);
    }
    counts.push(order);
  }
  return { counts, length: starts.length };
}

/** The BLEU counts of one hypothesis against one reference, both tokenised by 13a after trailing space is dropped. */
export function bleuStats(hypothesis: string, reference: string): BleuStats {
  // tokenize13a leaves single spaces between tokens and none at either end, so splitting on " " is Python's split().
  const hyp = wordNgrams(tokenize13a(hypothesis.replace(PY_TRAILING_SPACE, "")));
  const ref = wordNgrams(tokenize13a(reference.replace(PY_TRAILING_SPACE, "")));
  const correct = new Array<number>(MAX_ORDER).fill(0);
  const total = new Array<number>(MAX_ORDER).fill(0);
  for (let n = 0; n < MAX_ORDER; n++)
    for (const [key, count] of hyp.counts[n]!) {
      total[n]! += count;
      const inRef = ref.counts[n]!.get(key);
      if (inRef !== undefined) correct[n]! += Math.min(count, inRef);
    }
  return { hypLen: hyp.length, refLen: ref.length, correct, total };
}

/** The counts of several segments added up (a corpus). */
export function sumBleuStats(stats: readonly BleuStats[]): BleuStats {
  const out: BleuStats = {
    hypLen: 0,
    refLen: 0,
    correct: new Array<number>(MAX_ORDER).fill(0),
    total: new Array<number>(MAX_ORDER).fill(0),
  };
  for (const s of stats) {
    out.hypLen += s.hypLen;
    out.refLen += s.refLen;
    for (let n = 0; n < MAX_ORDER; n++) {
      out.correct[n]! += s.correct[n]!;
      out.total[n]! += s.total[n]!;
    }
  }
  return out;
}

/** log, with log 0 taken as a very large negative number (so a zero precision makes the score 0). */
function floorLog(x: number): number {
  return x === 0 ? -9999999999 : Math.log(x);
}

/**
 * BLEU (0–100) from counts, with "exp" smoothing: the k-th order with no match counts as 1 / (2^k · its n-grams).
 * With `effectiveOrder`, the mean of the log precisions runs over the orders the hypothesis has n-grams of.
 */
export function bleuFromStats(stats: BleuStats, options: { effectiveOrder: boolean }): number {
  const { hypLen, refLen, correct, total } = stats;
  const bp = hypLen < refLen ? (hypLen > 0 ? Math.exp(1 - refLen / hypLen) : 0) : 1;
  if (!correct.some((c) => c !== 0)) return 0;
  const precisions = new Array<number>(MAX_ORDER).fill(0);
  let smooth = 1;
  let order = MAX_ORDER;
  for (let n = 1; n <= MAX_ORDER; n++) {
    if (total[n - 1] === 0) break;
    if (options.effectiveOrder) order = n;
    if (correct[n - 1] === 0) {
      smooth *= 2;
      precisions[n - 1] = 100 / (smooth * total[n - 1]!);
    } else precisions[n - 1] = (100 * correct[n - 1]!) / total[n - 1]!;
  }
  let sum = 0;
  for (const p of precisions.slice(0, order)) sum += floorLog(p);
  return bp * Math.exp(sum / order);
}

/** Sentence-level BLEU of a hypothesis against its reference (effective order, as sacreBLEU's sentence_bleu). */
export function sentenceBleu(hypothesis: string, reference: string): number {
  return bleuFromStats(bleuStats(hypothesis, reference), { effectiveOrder: true });
}

/** Corpus-level BLEU: every pair's counts added up, then one score (as sacreBLEU's corpus_bleu). */
export function corpusBleu(pairs: readonly { hypothesis: string; reference: string }[]): number {
  return bleuFromStats(sumBleuStats(pairs.map((p) => bleuStats(p.hypothesis, p.reference))), {
    effectiveOrder: false,
  });
}

const CHAR_ORDER = 6;
const BETA = 2;

/** Per order 1…6: the hypothesis's n-grams (0 when the reference has none of that order), the reference's, the matches. */
export type ChrfStats = { hyp: number; ref: number; match: number }[];

function charNgrams(text: string): Map<string, number>[] {
  const joined = text.replace(PY_SPACES_GLOBAL, "");
  // The offsets of each code point (a character outside the BMP is two UTF-16 units), and the end.
  const offsets: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    offsets.push(i);
    const c = joined.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < joined.length) {
      const d = joined.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  offsets.push(joined.length);
  const chars = offsets.length - 1;
  const out: Map<string, number>[] = [];
  for (let n = 1; n <= CHAR_ORDER; n++) {
    const counts = new Map<string, number>();
    for (let i = 0; i + n <= chars; i++) {
      const key = joined.slice(offsets[i], offsets[i + n]);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    out.push(counts);
  }
  return out;
}

/** The chrF counts of one hypothesis against one reference. */
export function chrfStats(hypothesis: string, reference: string): ChrfStats {
  const hyp = charNgrams(hypothesis);
  const ref = charNgrams(reference);
  return hyp.map((h, i) => {
    const r = ref[i]!;
    let hypCount = 0;
    let match = 0;
    for (const [key, count] of h) {
      hypCount += count;
      const inRef = r.get(key);
      if (inRef !== undefined) match += Math.min(count, inRef);
    }
    let refCount = 0;
    for (const c of r.values()) refCount += c;
    return { hyp: r.size > 0 ? hypCount : 0, ref: refCount, match };
  });
}

export function sumChrfStats(stats: readonly ChrfStats[]): ChrfStats {
  const out: ChrfStats = Array.from({ length: CHAR_ORDER }, () => ({ hyp: 0, ref: 0, match: 0 }));
  for (const s of stats)
    s.forEach((o, i) => {
      out[i]!.hyp += o.hyp;
      out[i]!.ref += o.ref;
      out[i]!.match += o.match;
    });
  return out;
}

/** chrF (0–100): F-β of the precision and recall averaged over the orders where both sides have n-grams. */
export function chrfFromStats(stats: ChrfStats): number {
  const factor = BETA ** 2;
  let avgPrec = 0;
  let avgRec = 0;
  let orders = 0;
  for (const { hyp, ref, match } of stats) {
    if (hyp > 0 && ref > 0) {
      avgPrec += match / hyp;
      avgRec += match / ref;
      orders++;
    }
  }
  if (orders === 0) return 0;
  avgPrec /= orders;
  avgRec /= orders;
  if (avgPrec + avgRec === 0) return 0;
  let score = (1 + factor) * avgPrec * avgRec;
  score /= factor * avgPrec + avgRec;
  return 100 * score;
}

export function sentenceChrf(hypothesis: string, reference: string): number {
  return chrfFromStats(chrfStats(hypothesis, reference));
}

/** Corpus-level chrF: every pair's counts added up, then one score (as sacreBLEU's corpus_chrf). */
export function corpusChrf(pairs: readonly { hypothesis: string; reference: string }[]): number {
  return chrfFromStats(sumChrfStats(pairs.map((p) => chrfStats(p.hypothesis, p.reference))));
}
