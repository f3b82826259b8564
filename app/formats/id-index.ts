/**
 * The ids a file has named so far and the line each was first named on, for the duplicate check of an import read
 * as a stream (docs/reliability.md, "Bulk imports"). It grows with the file, so it is kept out of the JavaScript heap:
 * the ids' UTF-16 code units, their offsets and lines in typed arrays, and an open-addressing table of entry numbers
 * (about 2.5 bytes per character and 20 bytes per id). Heap objects, one per id, would grow the garbage collector's
 * working size several times over. An import on the server keeps its ids on disk instead (DiskIdLines in
 * app/platform/disk-id-lines.server.ts), so that what it holds does not grow with the file at all.
 */
import { grow } from "./typed-array-growth";

export interface IdLines {
  /** Adds `id`, named on `line`: undefined when it is new, else the line it was first named on (which it keeps). */
  add(id: string, line: number): number | undefined;
}

export class IdLineIndex implements IdLines {
  private units = new Uint16Array(1 << 16);
  private used = 0;
  /** Entry i's id is units[start[i] .. start[i + 1]); its line is line[i]. */
  private start = new Int32Array(1 << 12);
  private line = new Int32Array(1 << 12);
  private count = 0;
  /** Entry number + 1 in each slot, 0 for an empty slot; kept at most half full. */
  private table = new Int32Array(1 << 13);

  /** The line `id` was first added with, or undefined. */
  get(id: string): number | undefined {
    const entry = this.table[this.find(id, hashOf(id))]!;
    return entry === 0 ? undefined : this.line[entry - 1];
  }

  add(id: string, line: number): number | undefined {
    const first = this.get(id);
    if (first === undefined) this.set(id, line);
    return first;
  }

  /** Adds `id` with its line (an id already present keeps its first line). */
  set(id: string, line: number): void {
    const hash = hashOf(id);
    const slot = this.find(id, hash);
    if (this.table[slot] !== 0) return;
    if (this.used + id.length > this.units.length) this.units = grow(this.units, this.used + id.length);
    for (let i = 0; i < id.length; i++) this.units[this.used + i] = id.charCodeAt(i);
    if (this.count + 2 > this.start.length) {
      this.start = grow(this.start, this.count + 2);
      this.line = grow(this.line, this.count + 2);
    }
    this.start[this.count] = this.used;
    this.line[this.count] = line;
    this.used += id.length;
    this.count++;
    this.start[this.count] = this.used;
    this.table[slot] = this.count;
    if (this.count * 2 > this.table.length) this.rehash();
  }

  /** The slot holding `id`, or the empty slot where it would go. */
  private find(id: string, hash: number): number {
    const mask = this.table.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.table[slot]!;
      if (entry === 0 || this.equals(entry - 1, id)) return slot;
    }
  }

  private equals(entry: number, id: string): boolean {
    const from = this.start[entry]!;
    if (this.start[entry + 1]! - from !== id.length) return false;
    for (let i = 0; i < id.length; i++) if (this.units[from + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let entry = 0; entry < this.count; entry++) {
      let h = 0x811c9dc5;
      for (let i = this.start[entry]!; i < this.start[entry + 1]!; i++) h = Math.imul(h ^ this.units[i]!, 0x01000193);
      let slot = (h >>> 0) & mask;
      while (table[slot] !== 0) slot = (slot + 1) & mask;
      table[slot] = entry + 1;
    }
    this.table = table;
  }
}

/** FNV-1a over the UTF-16 code units. */
function hashOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
