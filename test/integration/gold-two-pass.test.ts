/**
 * `import-gold` reads its data_gt.json as a stream, in two passes (docs/reliability.md, "Memory bounded by the longest
 * line"): the first checks every record (`dataGtRecords` over `jsonElements`, app/gold/domain/), the second reads the
 * file again and hands its cases to the case import record by record. The file is never read whole, and one rewritten
 * between the passes is refused, `FILE: the file changed while it was being imported…`, leaving nothing.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { importFileSource, probeImportReadsForTests } from "../../app/cli/io";
import { importGold, type DataGtSource } from "../../app/gold/gold-export.server";
import { FILE_CHANGED_MESSAGE } from "../../app/formats/import-source";
import type { Db } from "../../app/platform/db.server";
import { freshDb } from "../support/db";

const FIXTURES = new URL("../fixtures/safe-psych/", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "concord-gold-two-pass-"));
let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => {
  probeImportReadsForTests(null);
  cleanup();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const count = (sql: string) => db.$client.prepare(sql).pluck().get() as number;

/** The reference fixture's records repeated under new ids until there are `n`, the last one's text marked `tag`. */
function dataGt(n: number, tag = ""): string {
  const base = JSON.parse(readFileSync(FIXTURES + "concord.data_gt.json", "utf8")) as {
    id: string;
    sections_metadata: { content: string }[];
  }[];
  const records = Array.from({ length: n }, (_, k) => {
    const r = structuredClone(base[k % base.length]!);
    r.id = `${r.id}-${k}`;
    if (k === n - 1 && tag) r.sections_metadata[0]!.content += tag;
    return r;
  });
  return JSON.stringify(records, null, 2) + "\n";
}

describe("import-gold in two passes", () => {
  it("never reads its file whole", async () => {
    const path = join(dir, "whole.json");
    writeFileSync(path, dataGt(1_200));
    const whole: string[] = [];
    probeImportReadsForTests({ handedOn: () => {}, readWhole: (p) => void whole.push(p) });
    let err = "";
    const io: CliIO = { out: () => {}, err: (t) => (err += t), readStdin: async () => "", isTTY: false };
    expect(await runCli(["import-gold", path, "--study", "Gold"], io), err).toBe(0);
    expect(whole).toEqual([]);
    expect(count("select count(*) from visible_cases")).toBe(1_200);
  });

  it("refuses a file rewritten between the passes, and leaves nothing", () => {
    const path = join(dir, "changed.json");
    writeFileSync(path, dataGt(1_200));
    const source = importFileSource(path, "gold", { json: true });
    let passes = 0;
    const counted: DataGtSource = {
      ...source,
      sha256: () => source.sha256(),
      textPieces: () => {
        // The last record's text changes before the second pass: the first batches are written by then.
        if (++passes === 2) writeFileSync(path, dataGt(1_200, " (rewritten)"));
        return source.textPieces();
      },
    };
    const r = importGold(db, { studyName: "Gold", text: counted, filename: path, actorId: null });
    expect(r).toEqual({ ok: false, errors: [`${path}: ${FILE_CHANGED_MESSAGE}`] });
    expect(passes).toBe(2);
    for (const table of ["studies", "cases", "import_runs", "events"])
      expect(count(`select count(*) from ${table}`), table).toBe(0);
  });
});
