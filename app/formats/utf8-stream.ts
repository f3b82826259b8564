/**
 * Strict UTF-8 over a file read in chunks (docs/reliability.md, "Hostile and damaged files" and "Bulk imports"):
 * the bytes are handed on in pieces that end just after a line feed (so no character and no CRLF is ever split
 * between two pieces), each checked as it arrives; the first invalid byte sequence stops the stream with the error
 * `decodeUtf8` gives for the whole file, naming its line. Server and command line only (node:buffer).
 */
import { isUtf8 } from "node:buffer";
import { decodeUtf8, NOT_UTF8, type TextProblem } from "./strict-text";

const LF = 0x0a;

export class StrictUtf8Stream {
  /** The bytes after the last line feed so far (a line not yet ended), in the chunks they came in. */
  private carry: Uint8Array[] = [];
  /** Line feeds in every piece handed on so far: decodeUtf8 numbers lines by line feeds. */
  private lines = 0;
  error: TextProblem | null = null;

  constructor(private readonly onPiece: (piece: Uint8Array) => void) {}

  write(chunk: Uint8Array): void {
    if (this.error || chunk.length === 0) return;
    const last = chunk.lastIndexOf(LF);
    if (last < 0) {
      this.carry.push(chunk);
      return;
    }
    this.carry.push(chunk.subarray(0, last + 1));
    this.emit(concat(this.carry));
    this.carry = last + 1 < chunk.length ? [chunk.subarray(last + 1)] : [];
  }

  finish(): void {
    if (this.error || this.carry.length === 0) return;
    const rest = concat(this.carry);
    this.carry = [];
    this.emit(rest);
  }

  private emit(piece: Uint8Array): void {
    if (!isUtf8(piece)) {
      const found = decodeUtf8(piece);
      this.error = { line: this.lines + ("error" in found ? found.error.line : 1), message: NOT_UTF8 };
      return;
    }
    for (let i = piece.indexOf(LF); i >= 0; i = piece.indexOf(LF, i + 1)) this.lines++;
    this.onPiece(piece);
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
