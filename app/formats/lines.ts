/**
 * Physical line numbers, counted once for every reader of line-based files (CSV, JSONL): LF, CRLF and a lone CR each
 * end one line, as Python's universal newlines and text editors count them. A CRLF is one line end even inside a
 * quoted CSV cell (csv-parse's own `info.lines` counts it as two, which shifts every later line number).
 */

const LF = 0x0a;
const CR = 0x0d;

/**
 * Walks forward through a text's code units (UTF-16 units of a string or UTF-8 bytes: CR and LF are the same unit in
 * both) and answers "which line is offset N on?". Offsets must not decrease between calls.
 */
export class LineCounter {
  private at = 0;
  private line = 1;

  constructor(
    private readonly unitAt: (offset: number) => number,
    private readonly length: number,
  ) {}

  static ofText(text: string): LineCounter {
    return new LineCounter((i) => text.charCodeAt(i), text.length);
  }

  static ofBytes(bytes: Uint8Array): LineCounter {
    return new LineCounter((i) => bytes[i]!, bytes.length);
  }

  /** The 1-based line holding `offset`. */
  lineAt(offset: number): number {
    const end = Math.min(offset, this.length);
    for (; this.at < end; this.at++) {
      const c = this.unitAt(this.at);
      if (c === LF || (c === CR && this.unitAt(this.at + 1) !== LF)) this.line++;
    }
    return this.line;
  }

  /** The line of the first unit at or after `offset` that is not a line end (the start of the next non-blank line). */
  nextContentLine(offset: number): number {
    let i = Math.min(offset, this.length);
    while (i < this.length && (this.unitAt(i) === LF || this.unitAt(i) === CR)) i++;
    return this.lineAt(i);
  }
}

/**
 * LineCounter over bytes that arrive in chunks (a file read as a stream): `append` each chunk as it is read; offsets
 * count from the first byte appended, must not decrease between calls, and must lie in what was appended. Chunks
 * the count has passed are let go, so it holds only the bytes between the last offset asked and the last appended.
 */
export class StreamLineCounter {
  private chunks: Uint8Array[] = [];
  /** Offset of chunks[0][0]. */
  private base = 0;
  private appended = 0;
  private at = 0;

  /** `line`: the line of the first byte appended (1 for a whole file; more when counting from inside one). */
  constructor(private line = 1) {}

  append(bytes: Uint8Array): void {
    if (bytes.length) this.chunks.push(bytes);
    this.appended += bytes.length;
  }

  private unitAt(offset: number): number | undefined {
    let start = this.base;
    for (const c of this.chunks) {
      if (offset < start + c.length) return c[offset - start];
      start += c.length;
    }
    return undefined;
  }

  /** The 1-based line holding `offset`. */
  lineAt(offset: number): number {
    const end = Math.min(offset, this.appended);
    while (this.at < end) {
      const chunk = this.chunks[0]!;
      const stop = Math.min(end - this.base, chunk.length);
      for (let j = this.at - this.base; j < stop; j++) {
        const c = chunk[j]!;
        if (c === LF) this.line++;
        else if (c === CR) {
          // A CR that is the last byte appended counts as a line end of its own, as at the end of a file: offsets
          // asked are starts of content or ends of records, which csv-parse gives only once it has seen past them.
          const next = j + 1 < chunk.length ? chunk[j + 1] : this.unitAt(this.base + j + 1);
          if (next !== LF) this.line++;
        }
      }
      this.at = this.base + stop;
      if (stop === chunk.length) {
        this.chunks.shift();
        this.base += chunk.length;
      }
    }
    return this.line;
  }

  /** The line of the first unit at or after `offset` that is not a line end (the start of the next non-blank line). */
  nextContentLine(offset: number): number {
    let i = Math.min(offset, this.appended);
    for (;;) {
      const c = this.unitAt(i);
      if (c !== LF && c !== CR) break;
      i++;
    }
    return this.lineAt(i);
  }
}
