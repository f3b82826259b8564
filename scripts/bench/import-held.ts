/**
 * What a case import and the gold export of its study hold, for `npm run bench -- --only bulk-import`
 * (docs/reliability.md, "Bulk imports"): run as `node --expose-gc --import tsx scripts/bench/import-held.ts DB
 * FILE`, it imports FILE as the command line does (read in 64 KiB pieces, written batch by batch) and, after every
 * committed chunk, collects the garbage and records the memory still in use (JavaScript heap and the buffers outside
 * it); then it exports the study's gold labels as `export-gold` does, recording the same after every 640 KiB of data.csv
 * (about 500 records).
 * Prints one JSON line, in bytes: for each, that figure's largest and least from the second sample on (the first
 * also holds what starting up left, about 1 MiB, gone by the second), and the number of samples; for the export,
 * also the bytes it wrote per record (its three files). The processes' peak
 * RSS is measured separately: it also counts garbage not yet collected, which this probe takes out.
 */
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { fileChunks } from "../../app/cli/io";
import { streamGold } from "../../app/gold/gold-export.server";
import { openDatabase } from "../../app/platform/db.server";

const [dbPath, file] = process.argv.slice(2) as [string, string];
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error("run with node --expose-gc");
const inUse = () => {
  collect();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};
const figures = (samples: number[]) => {
  const steady = samples.slice(1);
  return { max: Math.max(...steady), min: Math.min(...steady), samples: samples.length };
};

const db = openDatabase(dbPath);
const imported: number[] = [];
const result = importCases(
  db,
  { studyName: "Held", bytes: fileChunks(file), filename: file, actorId: null },
  { onChunk: () => imported.push(inUse()) },
);
if (!result.written) throw new Error(`the import wrote nothing: ${JSON.stringify(result.parse.errors.slice(0, 3))}`);

const exported: number[] = [];
let bytes = 0;
let csvBytes = 0;
let sampledAt = 0;
// The export hands its files over about 64 KiB at a time (PieceWriter in app/gold/gold-export.server.ts): sampled
// every 640 KiB of data.csv, about every 500 records of the realistic notes (1.3 KB each).
const gold = streamGold(db, { studyId: requireStudyByName(db, "Held").id }, (name, text) => {
  const n = Buffer.byteLength(text);
  bytes += n;
  if (name !== "data.csv") return;
  csvBytes += n;
  if (csvBytes - sampledAt >= 640 * 1024) {
    sampledAt = csvBytes;
    exported.push(inUse());
  }
});
if (!gold.ok) throw new Error(gold.message);
const output = { ...figures(exported), bytesPerRecord: bytes / gold.exported };
process.stdout.write(JSON.stringify({ import: figures(imported), export: output }) + "\n");
