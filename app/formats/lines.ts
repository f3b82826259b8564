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
