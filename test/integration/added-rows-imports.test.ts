/**
 * The imports that add rows to an existing parent, and the imports of work, leave room for other writers and stay
 * all-or-nothing for readers (docs/reliability.md, "Bulk imports"): the new rows carry the import run's id and are
 * written in short transactions; the last transaction checks the guard again and deletes the run's row. A reader on
 * another connection, through the services' own queries, sees nothing of the import between chunks and all of it
 * after; a failure half way, or a guard that no longer holds at the end, leaves the old state; a killed import
 * leaves hidden rows that the start's cleaning (and the next import) removes, after which the same import completes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { importResponses, listResponseImports } from "../../app/judge-validation/judge-responses.server";
import { bucketOverview, drawSample } from "../../app/judge-validation/judge-sample.server";
import { getJudgeSetByName, listJudgeSets } from "../../app/judge-validation/judge-sets.server";
import { cleanAbandonedRuns } from "../../app/platform/import-runs.server";
import { ingestBatchOutput } from "../../app/rubric-grading/batch.server";
import { customId } from "../../app/rubric-grading/domain/batch";
import { countPendingGrading } from "../../app/rubric-grading/work.server";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { freshDb, makeUser } from "../support/db";
import { mentatBankCsv, mentatRatingsCsv } from "../support/mentat-files";
import { getBank, importQuestionBank, requireBankByName } from "../../app/mentat/banks.server";
import { importMentatAnnotations } from "../../app/mentat/mentat-annotations.server";
import { bankAnnotationRows } from "../../app/mentat/fits.server";
import { addBankRaters, listBankPanel } from "../../app/mentat/panel.server";
import { listBankQuestions } from "../../app/mentat/questions.server";
import { listRaterQuestions, saveOptionRating } from "../../app/mentat/ratings.server";
import { runImportChild } from "../support/spawn-import";
import {
  createScreeningStudy,
  listScreeningStudies,
  listUnusedItems,
  studyState,
} from "../../app/screening/screening.server";
import { importScreeningFiles } from "../../app/screening/screening-import.server";
import { openRound, unusedItemCount } from "../../app/screening/screening-rounds.server";
import { recallPoolCsv } from "../../app/screening/screening-release.server";
import { listReviewerEntries } from "../../app/screening/screening-review.server";
import { corpus, enc, itemsJsonl, labelsCsv, SETTINGS, voteAll, type CorpusItem } from "../support/screening";

let db: Db;
let path: string;
let cleanup: () => void;
beforeEach(() => ({ db, path, cleanup } = freshDb()));
afterEach(() => cleanup());

const raw = (sql: string) => db.$client.prepare(sql).pluck().get() as number;

describe("judge-import into an existing set", () => {
  /** `n` responses in the simple format, samples numbered from `from`: 4 steps of each sample. */
  function responses(n: number, from = 0): Uint8Array {
    const lines = Array.from({ length: n }, (_, i) =>
      JSON.stringify({
        id: `s${from + Math.floor(i / 4)}`,
        model: "model-a",
        strategy: "sequential_info_neutral_prompting",
        step: (i % 4) + 1,
        is_last_section: i % 4 === 3,
        response: `Moderate depressive episode (F32.1), response ${i}.`,
        features: {
          primary_answer: "committed",
          contingency: "none",
          info_request: "none",
          icd_codes: ["F32.1"],
          diagnosis_names: ["moderate depressive episode"],
        },
      }),
    );
    return new TextEncoder().encode(lines.join("\n") + "\n");
  }
  const add = (bytes: Uint8Array, filename: string) => ({
    setName: "Set",
    files: [{ bytes, filename }],
    actorId: null,
  });
  /** Everything a reader sees of the set through the services: its count, its files, the draw's pool. */
  function view(reader: Db) {
    const set = getJudgeSetByName(reader, "Set")!;
    return {
      sets: listJudgeSets(reader).map((s) => `${s.name}:${s.responses}`),
      files: listResponseImports(reader, set.id).map((f) => `${f.filename}:${f.rows}`),
      available: bucketOverview(reader, set.id).reduce((s, b) => s + b.available, 0),
    };
  }
  const OLD = { sets: ["Set:8"], files: ["old.jsonl:8"], available: 8 };
  const TABLES = ["judge_responses", "judge_response_imports", "import_runs"];
  const counts = () => TABLES.map((t) => raw(`select count(*) from ${t}`));
  beforeEach(() => {
    expect(importResponses(db, add(responses(8), "old.jsonl"))).toMatchObject({ ok: true, written: 8 });
  });

  it("writes in short transactions, shows readers nothing between chunks and everything after", () => {
    const reader = openDatabase(path);
    const seen: ReturnType<typeof view>[] = [];
    let hidden = 0;
    let drawn = 0;
    const setId = getJudgeSetByName(db, "Set")!.id;
    const result = importResponses(db, add(responses(3000, 100), "new.jsonl"), {
      chunkBudgetMs: 1,
      onChunk: () => {
        seen.push(view(reader));
        hidden = reader.$client.prepare("select count(*) from judge_responses").pluck().get() as number;
        // A draw made meanwhile (a write, between two chunks) draws from the old responses only.
        drawn ||= drawSample(reader, { setId, seed: 7, actorId: null }).items;
      },
    });
    expect(result).toMatchObject({ ok: true, written: 3000, discardsDraw: true });
    expect(seen.length).toBeGreaterThan(2);
    expect(hidden).toBeGreaterThan(8);
    for (const v of seen) expect(v).toEqual(OLD);
    expect(drawn).toBeGreaterThan(0);
    expect(drawn).toBeLessThanOrEqual(8);
    expect(view(reader)).toEqual({ sets: ["Set:3008"], files: ["old.jsonl:8", "new.jsonl:3000"], available: 3008 });
    // The draw over the old pool was discarded by the last transaction; positions follow the old responses.
    expect(raw("select count(*) from judge_items")).toBe(0);
    expect(raw("select min(position) from judge_responses where sample_id = 's100'")).toBe(9);
    expect(raw("select count(*) from judge_responses where import_run is not null")).toBe(3000);
    expect(raw("select count(*) from import_runs")).toBe(0);
    expect(raw("select count(*) from events where action = 'import_responses'")).toBe(2);
    reader.$client.close();
  });

  it("that fails half way leaves the old state", () => {
    const before = [...counts(), raw("select count(*) from events")];
    let chunks = 0;
    expect(() =>
      importResponses(db, add(responses(2000, 100), "new.jsonl"), {
        chunkBudgetMs: 1,
        onChunk: () => {
          if (++chunks === 3) throw new Error("disk gone");
        },
      }),
    ).toThrow("disk gone");
    expect([...counts(), raw("select count(*) from events")]).toEqual(before);
    expect(view(db)).toEqual(OLD);
  });

  it("checks the guard again in its last transaction: rating started meanwhile refuses the whole import", () => {
    const other = openDatabase(path);
    let chunks = 0;
    const result = importResponses(db, add(responses(2000, 100), "new.jsonl"), {
      chunkBudgetMs: 1,
      onChunk: () => {
        if (++chunks === 2) other.$client.prepare("update judge_sets set status = 'rating'").run();
      },
    });
    expect(result).toMatchObject({ ok: false, written: 0 });
    expect(result.refusal).toMatch(/Rating has started on "Set"/);
    expect(counts()).toEqual([8, 1, 0]);
    other.$client.close();
  });

  it("that is killed leaves the old state; the start's cleaning removes its rows, then it imports", async () => {
    const file = join(path, "..", "new.jsonl");
    writeFileSync(file, responses(3000, 100));
    const killed = await runImportChild(["judge", path, file, "Set", "1", "kill-after-chunk"]);
    expect(killed.signal).toBe("SIGKILL");
    expect(raw("select count(*) from judge_responses")).toBeGreaterThan(8);
    expect(view(db)).toEqual(OLD);
    // The server's start cleans the same way (startup.server.ts).
    expect(cleanAbandonedRuns(db)).toBe(1);
    expect(counts()).toEqual([8, 1, 0]);
    // Killed again, then the next import (which cleans first) imports the whole file.
    await runImportChild(["judge", path, file, "Set", "1", "kill-after-chunk"]);
    const again = await runImportChild(["judge", path, file, "Set", "1"]);
    expect(again.out).toMatch(/done\n$/);
    expect(view(db)).toEqual({ sets: ["Set:3008"], files: ["old.jsonl:8", `${file}:3000`], available: 3008 });
    expect(counts()).toEqual([3008, 2, 0]);
  });
});

describe("grade-batch-ingest", () => {
  const N = 300;
  const CRITERIA = 10;
  const judge = {
    id: 2,
    setId: 1,
    role: "judge",
    name: "j",
    model: "judge-1",
    baseUrl: "http://127.0.0.1:9",
    maxTokens: 100,
    maxTokensParam: "max_tokens",
  } as never;
  const scope = { candidateIds: null, subsetId: null } as never;
  /** A set of N conversations of CRITERIA criteria each, one candidate's responses, and a judge (id 2). */
  beforeEach(() => {
    const $ = db.$client;
    // One transaction: each statement on its own would sync the disk once per row (synchronous = FULL).
    $.transaction(() => seedGradingSet($))();
  });
  function seedGradingSet($: typeof db.$client) {
    $.prepare(
      "insert into grading_sets (id, name, source_sha256, content_sha256, created_at) values (1, 's', 'x', 'x', 0)",
    ).run();
    for (const [id, role, name] of [
      [1, "candidate", "c"],
      [2, "judge", "j"],
    ] as const)
      $.prepare(
        "insert into grading_models (id, set_id, role, name, model, base_url, max_tokens, max_tokens_param, created_at) values (?, 1, ?, ?, 'm', 'u', 100, 'max_tokens', 0)",
      ).run(id, role, name);
    for (let i = 1; i <= N; i++) {
      $.prepare(
        "insert into grading_conversations (id, set_id, prompt_id, position, prompt, example_tags, content_hash) values (?, 1, ?, ?, '[]', '[]', 'h')",
      ).run(i, `p${i}`, i);
      for (let c = 0; c < CRITERIA; c++)
        $.prepare(
          "insert into grading_criteria (conversation_id, idx, criterion, points, tags) values (?, ?, 'a criterion', 1, '[]')",
        ).run(i, c);
      $.prepare(
        "insert into grading_responses (id, candidate_id, conversation_id, text, created_at) values (?, 1, ?, 'an answer', 0)",
      ).run(i, i);
    }
  }
  /** The Batch API output for every call: "criteria met" for even criteria. */
  function output(): string {
    const file = join(path, "..", "output.jsonl");
    const lines: string[] = [];
    for (let r = 1; r <= N; r++)
      for (let c = 0; c < CRITERIA; c++)
        lines.push(
          JSON.stringify({
            id: `b-${r}-${c}`,
            custom_id: customId(r, c, 2),
            response: {
              status_code: 200,
              body: {
                choices: [
                  {
                    index: 0,
                    message: {
                      role: "assistant",
                      content: JSON.stringify({ explanation: "ok", criteria_met: c % 2 === 0 }),
                    },
                    finish_reason: "stop",
                  },
                ],
              },
            },
            error: null,
          }),
        );
    writeFileSync(file, lines.join("\n") + "\n");
    return file;
  }
  const ingest = (opts: { chunkBudgetMs?: number; onChunk?: (done: number) => void } = {}) =>
    ingestBatchOutput(db, { judge, setId: 1, path: output(), via: "batch", ...opts });
  /** What a reader sees: the status's pending count (grade-status), and the verdicts the report reads. */
  const view = (reader: Db) => ({
    pending: countPendingGrading(reader, 2, 1, scope).pending,
    met: reader.$client
      .prepare(
        `select count(*) from grading_verdicts where judge_id = 2 and criteria_met = 1 and (import_run is null or import_run not in (select id from import_runs))`,
      )
      .pluck()
      .get(),
  });

  it("writes in short transactions, shows readers nothing between chunks and everything after", () => {
    const reader = openDatabase(path);
    const seen: ReturnType<typeof view>[] = [];
    let hidden = 0;
    const result = ingest({
      chunkBudgetMs: 1,
      onChunk: () => {
        seen.push(view(reader));
        hidden = reader.$client.prepare("select count(*) from grading_verdicts").pluck().get() as number;
      },
    });
    expect(result).toMatchObject({ errors: [], verdicts: N * CRITERIA, already: 0 });
    expect(seen.length).toBeGreaterThan(2);
    expect(hidden).toBeGreaterThan(0);
    for (const v of seen) expect(v).toEqual({ pending: N * CRITERIA, met: 0 });
    expect(view(reader)).toEqual({ pending: 0, met: (N * CRITERIA) / 2 });
    expect(raw("select count(*) from import_runs")).toBe(0);
    reader.$client.close();
  });

  it("that fails half way leaves nothing, and a second ingest writes everything", () => {
    let chunks = 0;
    expect(() =>
      ingest({
        chunkBudgetMs: 1,
        onChunk: () => {
          if (++chunks === 3) throw new Error("disk gone");
        },
      }),
    ).toThrow("disk gone");
    expect(raw("select count(*) from grading_verdicts")).toBe(0);
    expect(raw("select count(*) from import_runs")).toBe(0);
    expect(ingest()).toMatchObject({ verdicts: N * CRITERIA, already: 0 });
  });

  it("that is killed leaves hidden rows only; the start's cleaning removes them, then it ingests", async () => {
    const file = output();
    const killed = await runImportChild(["grading", path, file, "2", "1", "kill-after-chunk"]);
    expect(killed.signal).toBe("SIGKILL");
    expect(raw("select count(*) from grading_verdicts")).toBeGreaterThan(0);
    expect(view(db)).toEqual({ pending: N * CRITERIA, met: 0 });
    // The server's start cleans the same way (startup.server.ts).
    expect(cleanAbandonedRuns(db)).toBe(1);
    expect(raw("select count(*) from grading_verdicts")).toBe(0);
    // Killed again, then the next ingest (which cleans first) writes every verdict.
    await runImportChild(["grading", path, file, "2", "1", "kill-after-chunk"]);
    const again = await runImportChild(["grading", path, file, "2", "1"]);
    expect(again.out).toMatch(/done\n$/);
    expect(view(db)).toEqual({ pending: 0, met: (N * CRITERIA) / 2 });
    expect(raw("select count(*) from import_runs")).toBe(0);
  });
});

describe("mentat-import-ratings", () => {
  const Q = 400;
  const file = (rater: string, shift = 0) => ({ name: `${rater}.csv`, text: mentatRatingsCsv(rater, Q, shift) });
  const importRatings = (
    files: { name: string; text: string }[],
    opts: { replace?: boolean; chunkBudgetMs?: number; onChunk?: (done: number) => void } = {},
  ) =>
    importMentatAnnotations(db, {
      files,
      options: { bankName: "MENTAT", replace: opts.replace },
      actorId: null,
      chunkBudgetMs: opts.chunkBudgetMs,
      onChunk: opts.onChunk,
    });
  let bankId: number;
  /** A bank of Q triage questions, three raters, and x1's ratings of every question already imported. */
  beforeEach(async () => {
    for (const r of ["x1", "x2", "x3"]) await makeUser(db, r, ["rater"]);
    expect(importQuestionBank(db, { bankName: "MENTAT", text: mentatBankCsv(Q), actorId: null })).toMatchObject({
      ok: true,
    });
    bankId = requireBankByName(db, "MENTAT").id;
    expect(importRatings([file("X1")])).toMatchObject({ ok: true, created: Q });
  });
  const userId = (name: string) =>
    db.$client.prepare("select id from users where username = ?").pluck().get(name) as string;
  /**
   * What a reader sees through the services: the bank's submitted count and panel, the fit's input rows (and the
   * first x1 row's scores), the questions' rated counts, and x2's own list of questions.
   */
  function view(reader: Db) {
    const rows = bankAnnotationRows(reader, bankId);
    return {
      submitted: getBank(reader, bankId)!.numSubmitted,
      panel: listBankPanel(reader, bankId)
        .filter((m) => m.onPanel)
        .map((m) => `${m.username}:${m.submitted}`),
      fitRows: rows.length,
      x1First: rows.find((r) => r.rater === "x1" && r.question === "1")!.scores,
      questionsRated: listBankQuestions(reader, bankId).reduce((s, q) => s + q.submitted, 0),
      x2Started: listRaterQuestions(reader, userId("x2")).filter((q) => q.state !== "not_started").length,
    };
  }
  const TABLES = ["mentat_ratings", "mentat_bank_raters", "events", "import_runs"];
  const counts = () => TABLES.map((t) => raw(`select count(*) from ${t}`));
  let OLD: ReturnType<typeof view>;
  beforeEach(() => (OLD = view(db)));

  it("writes in short transactions, shows readers nothing between chunks and everything after", () => {
    expect(OLD).toMatchObject({ submitted: Q, panel: [`x1:${Q}`], fitRows: Q, questionsRated: Q, x2Started: 0 });
    const reader = openDatabase(path);
    const seen: ReturnType<typeof view>[] = [];
    let hidden = 0;
    // x2's and x3's ratings are new; x1's are replaced (every score changes): their events in the chunks, hidden
    // with the run, the rows themselves in the last transaction.
    const result = importRatings([file("X1", 5), file("X2"), file("X3")], {
      replace: true,
      chunkBudgetMs: 1,
      onChunk: () => {
        seen.push(view(reader));
        hidden = reader.$client.prepare("select count(*) from mentat_ratings").pluck().get() as number;
      },
    });
    expect(result).toMatchObject({ ok: true, written: true, created: 2 * Q, replaced: Q });
    expect(seen.length).toBeGreaterThan(2);
    expect(hidden).toBeGreaterThan(Q);
    for (const v of seen) expect(v).toEqual(OLD);
    const after = view(reader);
    expect(after).toMatchObject({
      submitted: 3 * Q,
      panel: [`x1:${Q}`, `x2:${Q}`, `x3:${Q}`],
      fitRows: 3 * Q,
      questionsRated: 3 * Q,
      x2Started: Q,
    });
    expect(after.x1First).not.toEqual(OLD.x1First);
    expect(raw("select count(*) from import_runs")).toBe(0);
    expect(raw("select count(*) from events where entity = 'mentat_rating' and action = 'import'")).toBe(4 * Q);
    reader.$client.close();
  });

  it("that fails half way leaves the old state", () => {
    const before = counts();
    let chunks = 0;
    expect(() =>
      importRatings([file("X1", 5), file("X2")], {
        replace: true,
        chunkBudgetMs: 1,
        onChunk: () => {
          if (++chunks === 3) throw new Error("disk gone");
        },
      }),
    ).toThrow("disk gone");
    expect(counts()).toEqual(before);
    expect(view(db)).toEqual(OLD);
  });

  it("checks again in its last transaction: an expert's own save meanwhile is kept and refuses the import", () => {
    addBankRaters(db, { bankId, raterIds: [userId("x2")], actorId: null });
    const other = openDatabase(path);
    const questionId = raw(`select id from mentat_questions where external_id = '1'`);
    let chunks = 0;
    let saved = "";
    expect(() =>
      importRatings([file("X2")], {
        chunkBudgetMs: 1,
        onChunk: () => {
          // x2 drafts question 1, whose imported rating (the file's first) is written hidden already.
          if (++chunks === 2)
            saved = saveOptionRating(other, {
              userId: userId("x2"),
              questionId,
              values: { scores: [10, null, null, null, null], comment: "mine" },
              version: 0,
              intent: "draft",
            }).ok
              ? "saved"
              : "refused";
        },
      }),
    ).toThrow(/An expert saved a rating of one of these questions during the import/);
    expect(saved).toBe("saved");
    expect(raw("select count(*) from mentat_ratings")).toBe(Q + 1);
    expect(
      db.$client.prepare("select comment from mentat_ratings where rater_id = ?").pluck().all(userId("x2")),
    ).toEqual(["mine"]);
    expect(raw("select count(*) from import_runs")).toBe(0);
    other.$client.close();
  });

  it("with --replace, a rating changed meanwhile refuses the import and keeps the change; no event of it is left", () => {
    const other = openDatabase(path);
    const events = () => raw("select count(*) from events where entity = 'mentat_rating' and action = 'import'");
    const before = events();
    let chunks = 0;
    expect(() =>
      importRatings([file("X1", 5), file("X2")], {
        replace: true,
        chunkBudgetMs: 1,
        onChunk: () => {
          // x1's rating of question 1 is revised by another connection while the import writes.
          if (++chunks === 2)
            other.$client
              .prepare(
                "update mentat_ratings set version = version + 1, comment = 'revised' where rater_id = ? and " +
                  "question_id = (select id from mentat_questions where external_id = '1')",
              )
              .run(userId("x1"));
        },
      }),
    ).toThrow(/"x1" changed a rating during the import: nothing was imported/);
    expect(events()).toBe(before);
    expect(raw("select count(*) from mentat_ratings")).toBe(Q);
    expect(raw("select count(*) from mentat_ratings where comment = 'revised'")).toBe(1);
    expect(view(db)).toEqual(OLD);
    other.$client.close();
  });

  it("that is killed leaves the old state; the start's cleaning removes its rows, then it imports", async () => {
    const csv = join(path, "..", "x2.csv");
    writeFileSync(csv, mentatRatingsCsv("X2", Q));
    const before = counts();
    const killed = await runImportChild(["mentat-ratings", path, csv, "MENTAT", "1", "kill-after-chunk"]);
    expect(killed.signal).toBe("SIGKILL");
    expect(raw("select count(*) from mentat_ratings")).toBeGreaterThan(Q);
    expect(view(db)).toEqual(OLD);
    // The server's start cleans the same way (startup.server.ts).
    expect(cleanAbandonedRuns(db)).toBe(1);
    expect(counts()).toEqual(before);
    // Killed again, then the next import (which cleans first) imports the whole file.
    await runImportChild(["mentat-ratings", path, csv, "MENTAT", "1", "kill-after-chunk"]);
    const again = await runImportChild(["mentat-ratings", path, csv, "MENTAT", "1"]);
    expect(again.out).toMatch(/done\n$/);
    expect(view(db)).toMatchObject({ submitted: 2 * Q, panel: [`x1:${Q}`, `x2:${Q}`], fitRows: 2 * Q, x2Started: Q });
  });
});

describe("screening-import into an existing study", () => {
  /** `n` new not_relevant items x0001…, after the test corpus's 26. */
  const extra = (n: number): CorpusItem[] =>
    Array.from({ length: n }, (_, i) => ({
      id: `x${String(i + 1).padStart(4, "0")}`,
      label: "not_relevant",
      truth: false,
      text: `How do I fix a dripping tap, number ${i + 1}`,
    }));
  let studyId: number;
  const files = (items: CorpusItem[]) => ({
    studyId,
    items: { bytes: enc(itemsJsonl(items)), filename: "items.jsonl" },
    labels: { bytes: enc(labelsCsv(items)), filename: "labels.csv" },
    actorId: null,
  });
  /** Everything an admin sees of the study through the services: the list, the overview, the recall pool. */
  function view(reader: Db) {
    // What the study page shows, read at this moment (the page's own reads after its rounds' kept figures).
    const o = studyState(reader, studyId);
    return {
      list: listScreeningStudies(reader).map((s) => `${s.name}:${s.items}:${s.next}`),
      screen: o.screen,
      unused: unusedItemCount(reader, studyId, o.screen.items),
      pool: listUnusedItems(reader, studyId).length,
      poolCsv: recallPoolCsv(reader, studyId).split("\r\n").length,
      next: o.next,
      tiers: o.tiers,
    };
  }
  const OLD = {
    list: ["S:26:open_round"],
    screen: { items: 26, relevant: 4, borderline: 2, not_relevant: 20, unlabelled: 0 },
    unused: 26,
    pool: 26,
    poolCsv: 28,
    next: { kind: "open_round", round: 1 },
    tiers: { clear: 0, possible: 0, no: 0 },
  };
  const TABLES = ["screening_items", "screening_labels", "screening_recall_tiers", "import_runs"];
  const counts = () => TABLES.map((t) => raw(`select count(*) from ${t}`));
  beforeEach(() => {
    studyId = createScreeningStudy(db, { name: "S", settings: SETTINGS, actorId: null }).id;
    expect(importScreeningFiles(db, files(corpus()))).toMatchObject({ ok: true, written: true });
  });
  /** The corpus with r01's text and n20's screen label changed (written in the last transaction), and 1,500 new. */
  const changed = () => [
    ...corpus().map((c) =>
      c.id === "r01"
        ? { ...c, text: `${c.text}, now worse` }
        : c.id === "n20"
          ? { ...c, label: "borderline" as const }
          : c,
    ),
    ...extra(1500),
  ];

  it("writes in short transactions, shows readers nothing between chunks and everything after", () => {
    const reader = openDatabase(path);
    const seen: ReturnType<typeof view>[] = [];
    let hidden = 0;
    const result = importScreeningFiles(db, {
      ...files(changed()),
      chunkBudgetMs: 1,
      onChunk: () => {
        seen.push(view(reader));
        hidden = reader.$client.prepare("select count(*) from screening_items").pluck().get() as number;
      },
    });
    expect(result).toMatchObject({ ok: true, written: true });
    expect(result.files.map((f) => [f.kind, f.created, f.changed, f.unchanged])).toEqual([
      ["items", 1500, 1, 25],
      ["labels", 1500, 1, 25],
    ]);
    expect(seen.length).toBeGreaterThan(2);
    expect(hidden).toBeGreaterThan(26);
    for (const v of seen) expect(v).toEqual(OLD);
    expect(view(reader)).toEqual({
      ...OLD,
      list: ["S:1526:open_round"],
      screen: { items: 1526, relevant: 4, borderline: 3, not_relevant: 1519, unlabelled: 0 },
      unused: 1526,
      pool: 1526,
      poolCsv: 1528,
    });
    // New items follow the old ones, each marked with the run (the first import's rows with its own); the changed
    // item and label were replaced in place.
    expect(raw("select position from screening_items where external_id = 'x0001'")).toBe(27);
    expect(raw("select max(position) from screening_items")).toBe(1526);
    expect(raw("select count(distinct import_run) from screening_items where position > 26")).toBe(1);
    expect(raw("select count(*) from screening_items where import_run is null")).toBe(0);
    expect(raw("select count(distinct import_run) from screening_labels")).toBe(2);
    expect(
      raw("select label from screening_labels l join screening_items i on i.id = l.item_id where external_id = 'n20'"),
    ).toBe("borderline");
    expect(raw("select count(*) from events where action = 'replace'")).toBe(1);
    expect(raw("select count(*) from events where action = 'import'")).toBe(2);
    expect(raw("select count(*) from import_runs")).toBe(0);
    reader.$client.close();
  });

  it("that fails half way leaves the old state", () => {
    const before = [...counts(), raw("select count(*) from events")];
    let chunks = 0;
    expect(() =>
      importScreeningFiles(db, {
        ...files(changed()),
        chunkBudgetMs: 1,
        onChunk: () => {
          if (++chunks === 3) throw new Error("disk gone");
        },
      }),
    ).toThrow("disk gone");
    expect([...counts(), raw("select count(*) from events")]).toEqual(before);
    expect(view(db)).toEqual(OLD);
  });

  it("checks again in its last transaction: a round opened meanwhile, from the old items, refuses the import", async () => {
    const raters: string[] = [];
    for (const u of ["rev1", "rev2", "rev3"]) raters.push((await makeUser(db, u, ["rater"])).id);
    const other = openDatabase(path);
    let chunks = 0;
    expect(() =>
      importScreeningFiles(db, {
        ...files(changed()),
        chunkBudgetMs: 1,
        onChunk: () => {
          if (++chunks === 2) openRound(other, { studyId, reviewerIds: raters, seed: 1, controls: 10, actorId: null });
        },
      }),
    ).toThrow('The screening study "S" changed while the files were being imported: nothing was imported.');
    // The round took the old items only (6 candidates and 10 controls), and nothing of the file is kept.
    expect(raw("select count(*) from screening_round_items")).toBe(16);
    expect(listReviewerEntries(db, raters[0]!)).toHaveLength(16);
    expect(counts()).toEqual([26, 26, 0, 0]);
    expect(raw("select count(*) from events where action = 'replace'")).toBe(0);
    other.$client.close();
  });

  it("writes a recall screen's tiers the same way: readers see no tier until the end", async () => {
    expect(importScreeningFiles(db, files([...corpus(), ...extra(1000)]))).toMatchObject({ ok: true });
    const raters: string[] = [];
    for (const u of ["rev1", "rev2", "rev3"]) raters.push((await makeUser(db, u, ["rater"])).id);
    openRound(db, { studyId, reviewerIds: raters, seed: 1, controls: 10, actorId: null });
    // Every reviewer includes every control: the round calls for a recall round.
    for (const r of raters) expect(voteAll(db, r, "lenient")).toBe(16);
    const pool = listUnusedItems(db, studyId);
    expect(pool).toHaveLength(1010);
    const reader = openDatabase(path);
    const before = { ...view(reader), entries: listReviewerEntries(reader, raters[0]!).length };
    expect(before.next).toEqual({ kind: "import_tiers", round: 2 });
    const seen: (typeof before)[] = [];
    const tiers =
      "id,tier,rationale\n" + pool.map((p, i) => `${p.externalId},${i < 10 ? "clear" : "no"},recall`).join("\n");
    const result = importScreeningFiles(db, {
      studyId,
      tiers: { bytes: enc(tiers + "\n"), filename: "tiers.csv" },
      actorId: null,
      chunkBudgetMs: 1,
      onChunk: () => seen.push({ ...view(reader), entries: listReviewerEntries(reader, raters[0]!).length }),
    });
    expect(result).toMatchObject({ ok: true, written: true, tiersForRound: 2 });
    expect(seen.length).toBeGreaterThan(2);
    for (const v of seen) expect(v).toEqual(before);
    expect(view(reader)).toMatchObject({
      next: { kind: "open_round", round: 2 },
      tiers: { clear: 10, possible: 0, no: 1000 },
    });
    expect(raw("select count(*) from screening_recall_tiers where import_run is not null")).toBe(1010);
    reader.$client.close();
  });

  it("that is killed leaves the old state; the start's cleaning removes its rows, then it imports", async () => {
    const file = join(path, "..", "items.jsonl");
    writeFileSync(file, itemsJsonl([...corpus(), ...extra(3000)]));
    const killed = await runImportChild(["screening-existing", path, file, "S", "1", "kill-after-chunk"]);
    expect(killed.signal).toBe("SIGKILL");
    expect(raw("select count(*) from screening_items")).toBeGreaterThan(26);
    expect(view(db)).toEqual(OLD);
    // The server's start cleans the same way (startup.server.ts).
    expect(cleanAbandonedRuns(db)).toBe(1);
    expect(counts()).toEqual([26, 26, 0, 0]);
    // Killed again, then the next import (which cleans first) imports the whole file.
    await runImportChild(["screening-existing", path, file, "S", "1", "kill-after-chunk"]);
    const again = await runImportChild(["screening-existing", path, file, "S", "1"]);
    expect(again.out).toMatch(/done\n$/);
    expect(view(db)).toMatchObject({
      list: ["S:3026:import_labels"],
      screen: { items: 3026, relevant: 4, borderline: 2, not_relevant: 20, unlabelled: 3000 },
    });
    expect(counts()).toEqual([3026, 26, 0, 0]);
  });
});
