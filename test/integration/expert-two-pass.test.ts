/**
 * `mentat-import` and `casereview-import` read their file in two passes through one shared module
 * (`importItemFile` in app/expert-panel/item-import.server.ts; docs/reliability.md, "Memory bounded by the longest
 * line"): the first checks the whole file and keeps of each item only its id, line and hashes, the second reads it
 * again through `secondPass` and writes it in the import run's chunks. A file rewritten between the passes is refused
 * ("the file changed while it was being imported") and leaves nothing: no parent, no item, no event, hidden or not —
 * into a new parent and into an existing one, even when the change is found after new items were written.
 * `mentat-import-ratings` likewise (`ratingBatches` in app/mentat/mentat-annotations.server.ts), file by file.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { importFileSource } from "../../app/cli/io";
import type { CliIO } from "../../app/cli/command";
import { runCli } from "../../app/cli/index";
import { importReviewSet } from "../../app/case-review/case-review.server";
import { importQuestionBank } from "../../app/mentat/banks.server";
import { importMentatAnnotations } from "../../app/mentat/mentat-annotations.server";
import { FILE_CHANGED_MESSAGE, type ImportSource } from "../../app/formats/import-source";
import type { Db } from "../../app/platform/db.server";
import { freshDb, makeUser } from "../support/db";

const dir = mkdtempSync(join(tmpdir(), "concord-expert-two-pass-"));
let db: Db;
let cleanup: () => void;
beforeEach(() => ({ db, cleanup } = freshDb()));
afterEach(() => cleanup());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const count = (sql: string) => db.$client.prepare(sql).pluck().get() as number;

/** A file streamed through the import contract whose passes are counted; `rewrite` runs before the second. */
function streamed(path: string, counter: { passes: number }, rewrite?: () => void): ImportSource {
  const source = importFileSource(path, "expert", { json: false });
  return {
    ...source,
    sha256: () => source.sha256(),
    jsonlLines: () => source.jsonlLines(),
    csvRecords: (options) => {
      if (++counter.passes === 2) rewrite?.();
      return source.csvRecords(options);
    },
  };
}

interface Kind {
  name: string;
  items: string;
  file(n: number, tag?: string): string;
  import(db: Db, name: string, text: string | ImportSource): { ok: boolean; errors?: unknown };
  /** Every row of the kind's tables, for "nothing changed". */
  rows(): unknown;
}

const KINDS: Kind[] = [
  {
    name: "mentat-import",
    items: "mentat_questions",
    file: (n, tag = "") =>
      [
        "id,domain,question,a,b,c,d,e,answer,notes",
        ...Array.from({ length: n }, (_, i) => `q${i},triage,"A <AGE> patient ${i}${tag}",w,x,y,z,v,c,note ${i}`),
      ].join("\n") + "\n",
    import: (db, name, text) => importQuestionBank(db, { bankName: name, text, actorId: null, chunkBudgetMs: 2 }),
    rows: () => [
      db.$client.prepare("select * from mentat_banks order by id").all(),
      db.$client.prepare("select * from mentat_questions order by id").all(),
      db.$client.prepare("select id, entity, action from events order by id").all(),
    ],
  },
  {
    name: "casereview-import",
    items: "review_items",
    file: (n, tag = "") =>
      [
        "id,kind,text",
        ...Array.from({ length: n }, (_, i) => `c${i},case,"A 40-year-old teacher ${i}${tag}, low mood"`),
      ].join("\n") + "\n",
    import: (db, name, text) => importReviewSet(db, { setName: name, text, actorId: null, chunkBudgetMs: 2 }),
    rows: () => [
      db.$client.prepare("select * from review_sets order by id").all(),
      db.$client.prepare("select * from review_items order by id").all(),
      db.$client.prepare("select id, entity, action from events order by id").all(),
    ],
  },
];

describe.each(KINDS)("$name in two passes", (kind) => {
  it("reads the file twice and imports it", () => {
    const path = join(dir, `${kind.name}-ok.csv`);
    writeFileSync(path, kind.file(1_200));
    const counter = { passes: 0 };
    expect(kind.import(db, "New", streamed(path, counter))).toMatchObject({ ok: true, created: 1_200 });
    expect(counter.passes).toBe(2);
    expect(count(`select count(*) from ${kind.items} where import_run is null`)).toBe(1_200);
  });

  it("refuses a file rewritten between the passes into a new parent, and leaves nothing", () => {
    const path = join(dir, `${kind.name}-new.csv`);
    writeFileSync(path, kind.file(1_200));
    const before = kind.rows();
    // The last item changes: the first batches are written by the time the change is read.
    const changed = kind.file(1_200).replace(/(\d+)(,|")([^\n]*)\n$/, "$1 changed$2$3\n");
    const r = kind.import(
      db,
      "New",
      streamed(path, { passes: 0 }, () => writeFileSync(path, changed)),
    );
    expect(r).toEqual({ ok: false, errors: [{ line: 0, message: FILE_CHANGED_MESSAGE }], warnings: [] });
    expect(kind.rows()).toEqual(before);
    expect(count("select count(*) from import_runs")).toBe(0);
  });

  it("refuses a file rewritten between the passes into an existing parent, and keeps the old state", () => {
    expect(kind.import(db, "Old", kind.file(3))).toMatchObject({ ok: true, created: 3 });
    const before = kind.rows();
    const path = join(dir, `${kind.name}-old.csv`);
    // Items 1 and 2 change, 1,197 are new; the rewrite changes the last new one, read after new ones are written.
    writeFileSync(path, kind.file(1_200, " again").replace(/ again/, ""));
    const text = kind.file(1_200, " again").replace(/ again/, "");
    const changed = text.replace(/(\d+) again/g, (m, i) => (i === "1199" ? `${i} rewritten` : m));
    const r = kind.import(
      db,
      "Old",
      streamed(path, { passes: 0 }, () => writeFileSync(path, changed)),
    );
    expect(r).toEqual({ ok: false, errors: [{ line: 0, message: FILE_CHANGED_MESSAGE }], warnings: [] });
    expect(kind.rows()).toEqual(before);
    expect(count("select count(*) from import_runs")).toBe(0);
  });

  it("the command line names the file", async () => {
    const path = join(dir, `${kind.name}-cli.csv`);
    writeFileSync(path, kind.file(2).replace(/\n$/, "\nbad id!,x\n"));
    let err = "";
    const io: CliIO = { out: () => {}, err: (t) => (err += t), readStdin: async () => "", isTTY: false };
    const args = kind.name === "mentat-import" ? ["--bank", "B"] : ["--set", "S"];
    expect(await runCli([kind.name, ...args, path], io)).toBe(2);
    expect(err).toContain(`${path}:4: `);
  });
});

describe("mentat-import-ratings in two passes", () => {
  const N = 1_200;
  const HEADER =
    "rt,stimulus,response,trial_type,trial_index,time_elapsed,internal_node_id,participant_name,rater_id,question_order,q_no,q,q_key";
  const instruction = (i: number, rater = "") => `0,,"",html-keyboard-response,${i},0,0.0-${i}.0,,${rater},,,,`;
  /** A MENTAT export of rater x1: four rows of instructions (the second names the rater), N ratings, a last row. */
  const ratingsFile = (score = (i: number) => 10 + (i % 50)) =>
    [
      HEADER,
      instruction(0),
      instruction(1, "x1"),
      instruction(2),
      instruction(3),
      ...Array.from(
        { length: N },
        (_, i) =>
          `2000,,"{""Q0"":${score(i)},""Q1"":20,""Q2"":30,""Q3"":40,""Q4"":50,""comment"":""c${i}""}",survey-slider,${i + 4},${i},0.0-${i + 4}.0,,,"[0,1,2,3,4]",${i + 1},Question ${i + 1},q_male`,
      ),
      instruction(N + 4),
    ].join("\n") + "\n";

  beforeEach(async () => {
    await makeUser(db, "x1", ["rater"]);
    const bank = [
      "id,domain,question,a,b,c,d,e,answer",
      ...Array.from({ length: N }, (_, i) => `${i + 1},triage,Question ${i + 1},w,x,y,z,v,c`),
    ].join("\n");
    expect(importQuestionBank(db, { bankName: "Bank", text: bank, actorId: null })).toMatchObject({ ok: true });
  });

  const ratingRows = () => [
    db.$client.prepare("select * from mentat_ratings order by id").all(),
    db.$client.prepare("select id, entity, action from events order by id").all(),
    db.$client.prepare("select * from mentat_bank_raters").all(),
  ];

  /** A streamed file whose passes are counted, with the ratings stored when each pass hands on its last row. */
  function counted(path: string, rewrite?: () => void) {
    const source = importFileSource(path, "mentatRatings", { json: false });
    const seen = { passes: 0, storedAtLastRow: [] as number[] };
    const wrapped: ImportSource = {
      ...source,
      sha256: () => source.sha256(),
      jsonlLines: () => source.jsonlLines(),
      csvRecords: (options) => {
        if (++seen.passes === 2) rewrite?.();
        const read = source.csvRecords(options);
        return {
          error: () => read.error(),
          records: (function* () {
            for (const record of read.records) {
              if (record.line === N + 6) seen.storedAtLastRow.push(count("select count(*) from mentat_ratings"));
              yield record;
            }
          })(),
        };
      },
    };
    return { file: { name: path, text: wrapped }, seen };
  }

  it("checks every file first, then writes as the second pass reads: not all rows kept until the write", () => {
    const path = join(dir, "ratings-ok.csv");
    writeFileSync(path, ratingsFile());
    const { file, seen } = counted(path);
    const r = importMentatAnnotations(db, {
      files: [file],
      options: { bankName: "Bank" },
      actorId: null,
      chunkBudgetMs: 2,
    });
    expect(r).toMatchObject({ ok: true, created: N });
    expect(seen.passes).toBe(2);
    // Nothing written when the first pass reads the last row; all but the last batch when the second does.
    expect(seen.storedAtLastRow[0]).toBe(0);
    expect(seen.storedAtLastRow[1]).toBeGreaterThanOrEqual(N - 500);
    expect(count("select count(*) from visible_mentat_ratings")).toBe(N);
  });

  it("refuses a file rewritten between the passes, naming it, and leaves nothing", () => {
    const path = join(dir, "ratings-changed.csv");
    writeFileSync(path, ratingsFile());
    const before = ratingRows();
    // The last rating's score changes: the first batches are written by the time it is read.
    const { file } = counted(path, () =>
      writeFileSync(
        path,
        ratingsFile((i) => (i === N - 1 ? 99 : 10 + (i % 50))),
      ),
    );
    expect(() =>
      importMentatAnnotations(db, { files: [file], options: { bankName: "Bank" }, actorId: null, chunkBudgetMs: 2 }),
    ).toThrow(`${path}: ${FILE_CHANGED_MESSAGE}`);
    expect(ratingRows()).toEqual(before);
    expect(count("select count(*) from import_runs")).toBe(0);
  });
});
