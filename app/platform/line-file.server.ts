/**
 * A line-based file (JSON Lines) read a line at a time with memory bounded by the longest line allowed, not by the
 * file (docs/reliability.md, "Result files"): the bytes are read 1 MiB at a time and split at line feeds, each line
 * is decoded whole as strict UTF-8 (a character split between two reads is never broken, and bytes that are not
 * UTF-8 are reported, never replaced), and a line longer than the limit is reported and skipped without being held.
 * Used by the readers of result files: Batch API outputs (app/rubric-grading/batch.server.ts) and multiple-choice
 * run folders (app/mc-evaluation/report.ts, and run.ts when it resumes).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { isUtf8 } from "node:buffer";

/**
 * `terminated`: the line ends with a line feed (false only for a last line without one); `bytes`: its length in the
 * file, line end included (so that a caller can cut the file after the last good line).
 */
export type FileLine =
  | { line: number; text: string; terminated: boolean; bytes: number }
  | { line: number; problem: string; terminated: boolean; bytes: number };

const LF = 0x0a;
const READ_BYTES = 1 << 20;

/**
 * Calls `visit` for every line of the file at `path` (1-based numbers; CRLF and LF end a line; the text has no line
 * end). Throws what opening or reading throws (ENOENT, EACCES, EIO) for the caller to word.
 */
export function forEachFileLine(path: string, maxLineBytes: number, visit: (line: FileLine) => void): void {
  const fd = openSync(path, "r");
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  let parts: Buffer[] = [];
  let held = 0;
  let tooLong = false;
  let number = 0;
  let consumed = 0;
  const append = (piece: Buffer) => {
    consumed += piece.length;
    if (tooLong || piece.length === 0) return;
    if (held + piece.length > maxLineBytes + 1) {
      // + 1: a CR before the line feed is not part of the line.
      tooLong = true;
      parts = [];
      held = 0;
      return;
    }
    parts.push(Buffer.from(piece));
    held += piece.length;
  };
  const end = (terminated: boolean) => {
    number++;
    const bytes = consumed + (terminated ? 1 : 0);
    consumed = 0;
    let content = parts.length === 1 ? parts[0] : Buffer.concat(parts, held);
    parts = [];
    held = 0;
    if (content.length > 0 && content[content.length - 1] === 0x0d) content = content.subarray(0, content.length - 1);
    // A UTF-8 byte order mark before the first line is not part of it (docs/formats.md, "Text policy of every import").
    if (number === 1 && content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf)
      content = content.subarray(3);
    if (tooLong || content.length > maxLineBytes) {
      tooLong = false;
      return visit({ line: number, problem: `the line is longer than ${maxLineBytes} bytes`, terminated, bytes });
    }
    if (!isUtf8(content)) return visit({ line: number, problem: "the line is not valid UTF-8", terminated, bytes });
    visit({ line: number, text: content.toString("utf8"), terminated, bytes });
  };
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, READ_BYTES, null);
      if (n === 0) break;
      let start = 0;
      for (let i = buffer.indexOf(LF, start); i >= 0 && i < n; i = buffer.indexOf(LF, start)) {
        append(buffer.subarray(start, i));
        end(true);
        start = i + 1;
      }
      append(buffer.subarray(start, n));
    }
    if (held > 0 || tooLong) end(false);
  } finally {
    closeSync(fd);
  }
}
