/**
 * The import contract (docs/reliability.md, "The import contract"; the text policy in docs/formats.md, "Text policy of
 * every import"): what every import — command line and page — checks of the bytes it is given before it reads a row,
 * and the helpers its row checks share. The command line reads files only through app/cli/io.ts — the streaming
 * reader `importFileSource` (lines or records, one chunk and one line held; docs/reliability.md, "Memory bounded by
 * the longest line"), `importFileChunks`, or `readImportFile` for the imports still read whole — and the pages decode
 * uploads only through `decodeImportBytes`; both run the `ImportByteCheck` below, so an import cannot take in a file
 * the contract refuses:
 *
 * - a size limit per import, checked before the first byte is read (the file's size on disk, or the upload's);
 * - a limit on the length of one line, checked as the bytes arrive, so memory is bounded by the longest line allowed
 *   and never by what a hostile file holds (a 50 MB line is refused after its first 8 MiB);
 * - strict UTF-8 (never U+FFFD), with the line of the first invalid byte;
 * - no NUL: a NUL byte anywhere, or a `\u0000` escape in a JSON file, is refused with its line;
 * - an empty file (nothing but a BOM or white space) is refused.
 *
 * The row checks then use `importIdProblem` (ids: no control or bidirectional characters, at most MAX_ID_CHARS of strict-text.ts) and
 * `DuplicateRows` (the same key twice with different content is refused, naming both lines). Every refusal is
 * `FILE:LINE: reason` (or `FILE: reason` for the file as a whole), and nothing is written (exit code 2).
 *
 * Server and command line only (node:buffer).
 */
import { isUtf8 } from "node:buffer";
import { decodeUtf8, idProblem, NOT_UTF8, type TextProblem } from "./strict-text";

export type { TextProblem };

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

export interface ImportLimits {
  /** The largest file the import reads, in bytes: a larger one is refused before it is read. */
  maxFileBytes: number;
  /** The longest line, in bytes without its line end: a longer one is refused as soon as it is seen. */
  maxLineBytes: number;
}

/**
 * The limits of each import (docs/formats.md, "Text policy of every import"). The case import and `grade-import`
 * hold one line of their file at a time (docs/reliability.md, "Memory bounded by the longest line"); the others
 * stream their file but keep its checked rows, or read it whole, so their limit bounds what they hold.
 */
export const IMPORT_LIMITS = {
  /** `import` and the admin's import page (streamed on the command line; an upload is bounded by the page). */
  cases: { maxFileBytes: 16 * GiB, maxLineBytes: 8 * MiB },
  /** `import-gold`: one JSON document, read whole. */
  gold: { maxFileBytes: 1 * GiB, maxLineBytes: 8 * MiB },
  /** `judge-import` (responses and labels). */
  judge: { maxFileBytes: 200 * MiB, maxLineBytes: 8 * MiB },
  /** `screening-import` (items, labels, tiers, categories). */
  screening: { maxFileBytes: 200 * MiB, maxLineBytes: 8 * MiB },
  /** `mentat-import`, `casereview-import` and the expert-ratings page. */
  expert: { maxFileBytes: 20 * MiB, maxLineBytes: 1 * MiB },
  /** `mentat-import-ratings`: each annotation file. */
  mentatRatings: { maxFileBytes: 20 * MiB, maxLineBytes: 1 * MiB },
  /** `grade-import` and `grade-subset`. */
  grading: { maxFileBytes: 512 * MiB, maxLineBytes: 8 * MiB },
  /** `grade-batch-ingest`: a Batch API or offline engine's output (50,000 results a file). */
  batchOutput: { maxFileBytes: 2 * GiB, maxLineBytes: 8 * MiB },
  /** `rater-quality --calibration`. */
  calibration: { maxFileBytes: 2 * MiB, maxLineBytes: 64 * KiB },
  /** `prep-import` and the preparation page (read whole: notes and the detector settings' lists). */
  preparation: { maxFileBytes: 200 * MiB, maxLineBytes: 8 * MiB },
  /** `mc-run --items` (and its `--clusters` file). */
  mcItems: { maxFileBytes: 200 * MiB, maxLineBytes: 8 * MiB },
  /** `eval-import` and the evaluation page: each trajectories.jsonl, streamed; run.json and timing.json whole. */
  evalRuns: { maxFileBytes: 4 * GiB, maxLineBytes: 8 * MiB },
} as const satisfies Record<string, ImportLimits>;

export type ImportKind = keyof typeof IMPORT_LIMITS;

let testLimits: Partial<ImportLimits> | null = null;

/**
 * Tests only: lowers every import's limits to `limits` (null restores the real ones), so that an over-size file can
 * be a few hundred kilobytes. Production never calls it; the real limits are checked by their own test.
 */
export function setImportLimitsForTests(limits: Partial<ImportLimits> | null): void {
  testLimits = limits;
}

/** The limits an import checks. */
export function importLimits(kind: ImportKind): ImportLimits {
  const real = IMPORT_LIMITS[kind];
  if (!testLimits) return real;
  return {
    maxFileBytes: Math.min(real.maxFileBytes, testLimits.maxFileBytes ?? Infinity),
    maxLineBytes: Math.min(real.maxLineBytes, testLimits.maxLineBytes ?? Infinity),
  };
}

/** A size in words: "20 MB", "1.5 GB", "812 bytes". */
function sizeText(bytes: number): string {
  if (bytes >= GiB) return `${+(bytes / GiB).toFixed(1)} GB`;
  if (bytes >= MiB) return `${+(bytes / MiB).toFixed(1)} MB`;
  if (bytes >= KiB) return `${+(bytes / KiB).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

/** The refusal of a file over its import's limit (checked before reading it). */
export function fileSizeProblem(byteLength: number, limits: ImportLimits): TextProblem | null {
  return byteLength > limits.maxFileBytes
    ? {
        line: 0,
        message: `the file is ${sizeText(byteLength)}; this import reads files of at most ${sizeText(limits.maxFileBytes)}.`,
      }
    : null;
}

const EMPTY_FILE = "the file is empty: there is nothing to import.";
const NUL_BYTE = "the file holds a NUL byte (U+0000), which no text of an import may contain.";
const NUL_ESCAPE = "a JSON string holds a NUL character (\\u0000), which no text of an import may contain.";

const LF = 0x0a;
const CR = 0x0d;
const BACKSLASH = 0x5c;
const NUL_ESCAPE_TAIL = Buffer.from("u0000");

/**
 * The contract's checks over a file's bytes as they arrive, chunk by chunk (or all at once): its size, the length of
 * each line, NUL bytes, `\u0000` escapes in a JSON file, and whether there is anything but a BOM and white space. It
 * keeps nothing of the bytes but the last few (an escape cut between two chunks): a caller that keeps the chunks
 * holds at most the file's limit, and one that stops at the first problem has read at most one line too many.
 * UTF-8 is checked by the caller over each piece ending at a line feed (`StrictUtf8Stream`), or whole.
 */
export class ImportByteCheck {
  problem: TextProblem | null = null;
  /** Line feeds and lone CRs before the current line. */
  private lineEnds = 0;
  private lineBytes = 0;
  private total = 0;
  private lastWasCr = false;
  private content = false;
  /** The last bytes of the previous chunk, for an escape cut between two chunks. */
  private tail: Uint8Array = new Uint8Array(0);

  constructor(
    private readonly limits: ImportLimits,
    private readonly json: boolean,
  ) {}

  /** Checks the next chunk; false once the file is refused (the caller stops reading). */
  write(chunk: Uint8Array): boolean {
    if (this.problem) return false;
    this.total += chunk.length;
    if (this.total > this.limits.maxFileBytes) {
      // The file grew after its size was checked, or the caller gave no size: the limit still holds.
      this.problem = {
        line: 0,
        message: `the file is larger than ${sizeText(this.limits.maxFileBytes)}, the most this import reads.`,
      };
      return false;
    }
    const nul = chunk.indexOf(0);
    const upto = nul < 0 ? chunk.length : nul;
    if (!this.content) this.content = hasContent(chunk, upto, this.total === chunk.length);
    if (!this.lines(chunk, upto)) return false;
    if (nul >= 0) {
      this.problem = { line: this.lineEnds + 1, message: NUL_BYTE };
      return false;
    }
    if (this.json && !this.escapes(chunk)) return false;
    return true;
  }

  /** After the last chunk: the file's problem, or null. */
  finish(): TextProblem | null {
    if (!this.problem && !this.content) this.problem = { line: 0, message: EMPTY_FILE };
    return this.problem;
  }

  /** Counts line ends in chunk[0, upto) and refuses a line over the limit at the line it is on. */
  private lines(chunk: Uint8Array, upto: number): boolean {
    let at = 0;
    // The LF of a CRLF whose CR ended the previous chunk: that CR was counted as the line end.
    if (this.lastWasCr && upto > 0 && chunk[0] === LF) at = 1;
    this.lastWasCr = false;
    let nextCr = -1;
    while (at < upto) {
      let lf = chunk.indexOf(LF, at);
      if (lf < 0 || lf > upto) lf = upto;
      // A lone CR (an old Mac file) ends a line too; the next CR is looked for once, not on every line.
      if (nextCr < at && nextCr !== Infinity) {
        nextCr = chunk.indexOf(CR, at);
        if (nextCr < 0) nextCr = Infinity;
      }
      const cr = nextCr < lf ? nextCr : -1;
      const end = cr >= 0 ? cr : lf;
      this.lineBytes += end - at;
      if (this.lineBytes > this.limits.maxLineBytes) return this.tooLong();
      if (end >= upto) return true;
      this.lineEnds++;
      this.lineBytes = 0;
      if (cr < 0) at = lf + 1;
      else if (cr + 1 < chunk.length) at = chunk[cr + 1] === LF ? cr + 2 : cr + 1;
      else {
        this.lastWasCr = true;
        at = cr + 1;
      }
    }
    return true;
  }

  private tooLong(): false {
    this.problem = {
      line: this.lineEnds + 1,
      message: `the line is longer than ${sizeText(this.limits.maxLineBytes)}, the longest this import reads.`,
    };
    return false;
  }

  /** Refuses a `\u0000` escape (an odd number of backslashes before `u0000`), also one cut between two chunks. */
  private escapes(chunk: Uint8Array): boolean {
    const joined = this.tail.length ? Buffer.concat([this.tail, chunk]) : Buffer.from(chunk);
    for (let i = joined.indexOf(NUL_ESCAPE_TAIL); i >= 0; i = joined.indexOf(NUL_ESCAPE_TAIL, i + 1)) {
      let slashes = 0;
      while (i - slashes - 1 >= 0 && joined[i - slashes - 1] === BACKSLASH) slashes++;
      if (slashes % 2 === 1) {
        // The line: the escape is on the current line unless a line end follows it in this chunk.
        let after = 0;
        for (let j = i; j < joined.length; j++) if (joined[j] === LF) after++;
        this.problem = { line: this.lineEnds + 1 - after, message: NUL_ESCAPE };
        return false;
      }
    }
    this.tail = joined.subarray(Math.max(0, joined.length - 64));
    return true;
  }
}

/** Whether bytes [0, upto) hold anything but white space (and a leading BOM at the file's start). */
function hasContent(chunk: Uint8Array, upto: number, atStart: boolean): boolean {
  let i = atStart && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
  for (; i < upto; i++) {
    const c = chunk[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== LF && c !== CR) return true;
  }
  return false;
}

/**
 * The contract's checks of bytes already in memory (a page's upload), UTF-8 aside: the first problem, or null. The
 * page's request size bounds what it holds; the import's own limit is checked too.
 */
export function importBytesProblem(
  bytes: Uint8Array,
  limits: ImportLimits,
  format: { json: boolean },
): TextProblem | null {
  const size = fileSizeProblem(bytes.byteLength, limits);
  if (size) return size;
  const check = new ImportByteCheck(limits, format.json);
  check.write(bytes);
  return check.finish();
}

/**
 * Bytes already in memory (a page's upload) through the contract: the strict UTF-8 text (a BOM kept, for the reader
 * to drop) or the first problem.
 */
export function decodeImportBytes(
  bytes: Uint8Array,
  limits: ImportLimits,
  format: { json: boolean },
): { text: string } | { problem: TextProblem } {
  const problem = importBytesProblem(bytes, limits, format);
  if (problem) return { problem };
  if (isUtf8(bytes)) return { text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8") };
  const decoded = decodeUtf8(bytes);
  return { problem: "error" in decoded ? decoded.error : { line: 1, message: NOT_UTF8 } };
}

/** `FILE:LINE: reason` (or `FILE: reason` for the file as a whole): how every import words a refusal. */
export function refusalLine(file: string, problem: TextProblem): string {
  return `${file}${problem.line > 0 ? `:${problem.line}` : ""}: ${problem.message}`;
}

/**
 * Why an id cannot be used, or null: control or bidirectional characters (NUL included), or longer than
 * MAX_ID_CHARS (strict-text.ts). `what` names it in the message ("the case id").
 */
export function importIdProblem(id: string, what = "the id"): string | null {
  const problem = idProblem(id);
  return problem ? problem.replace(/^the id/, what) : null;
}

/**
 * Duplicate keys across a file's rows: the same key again with the same content is `repeat` (each import says
 * whether that is allowed); with other content it is refused with both lines.
 */
export class DuplicateRows {
  private readonly seen = new Map<string, { line: number; content: string }>();

  /** Null for a key not seen before; otherwise what to report at `line`. */
  see(key: string, line: number, content: string, what = "the id"): { repeat: number } | { conflict: string } | null {
    const first = this.seen.get(key);
    if (!first) {
      this.seen.set(key, { line, content });
      return null;
    }
    if (first.content === content) return { repeat: first.line };
    return {
      conflict: `${what} ${JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key)} is given twice with different content: on line ${first.line} and on line ${line}.`,
    };
  }
}
