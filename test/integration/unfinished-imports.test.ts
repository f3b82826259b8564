/**
 * Nothing of an unfinished import is shown anywhere (docs/reliability.md, "Bulk imports"): for each kind of import, a
 * copy of the demo database gets a half-written import of that kind — the import run in its own process, killed with
 * SIGKILL after its second chunk, as `kill -9` would — and then every page loader, download and command that reads
 * the tables an import writes is called on it. Each must answer exactly what it answered before the import started
 * (the same rows, the same counts); a page or service asked for a hidden row by its id answers "not found".
 *
 * Table-driven: a new kind of import is one row of KINDS, a new reader one row of PAGES, COMMANDS or BY_ID.
 */
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  statSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoaderFunctionArgs } from "@remix-run/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { login } from "../../app/accounts/users.server";
import { runCli } from "../../app/cli";
import type { CliIO } from "../../app/cli/command";
import {
  DEMO_JUDGE_SET,
  DEMO_MENTAT_BANK,
  DEMO_PASSWORD,
  DEMO_REVIEW_SET,
  DEMO_SCREENING_STUDY,
  DEMO_STUDY,
  seedDemo,
} from "../../app/demo/demo.server";
import { exportSetFile, listSampledItems, sampledRows } from "../../app/judge-validation/judge-set-export.server";
import { importResponses } from "../../app/judge-validation/judge-responses.server";
import { drawSample } from "../../app/judge-validation/judge-sample.server";
import { setAdjudicationMode } from "../../app/annotation/studies.server";
import { setQualitySettings } from "../../app/annotation/rater-quality.server";
import { QUALITY_OFF } from "../../app/annotation/domain/rater-quality";
import { importQuestionBank } from "../../app/mentat/banks.server";
import { importMentatAnnotations } from "../../app/mentat/mentat-annotations.server";
import { openDatabase, setDb, type Db } from "../../app/platform/db.server";
import { ServiceError } from "../../app/platform/service-error";
import { customId } from "../../app/rubric-grading/domain/batch";
import { VISIBLE_VIEWS } from "../../db/schema-visible";
import { makeUser } from "../support/db";
import { mentatBankCsv, mentatRatingsCsv } from "../support/mentat-files";
import { itemsJsonl, SETTINGS, type CorpusItem } from "../support/screening";
import { importIntoNewScreeningStudy } from "../../app/screening/screening-import.server";
import { runImportChild } from "../support/spawn-import";
import * as adminHome from "../../app/routes/admin._index";
import * as adminCase from "../../app/routes/admin.cases.$caseId";
import * as adminCaseExport from "../../app/routes/admin.cases.$caseId_.export";
import * as studyPage from "../../app/routes/admin.studies.$studyId._index";
import * as studyProgress from "../../app/routes/admin.studies.$studyId.progress";
import * as studyStats from "../../app/routes/admin.studies.$studyId.stats";
import * as studyQuality from "../../app/routes/admin.studies.$studyId.quality";
import * as studyExport from "../../app/routes/admin.studies.$studyId.export";
import * as judgeSets from "../../app/routes/admin.judge-validation._index";
import * as judgeSet from "../../app/routes/admin.judge-validation.$setId._index";
import * as judgeReport from "../../app/routes/admin.judge-validation.$setId.report";
import * as judgeExport from "../../app/routes/admin.judge-validation.$setId.export.$file";
import * as screeningStudies from "../../app/routes/admin.screening._index";
import * as screeningStudy from "../../app/routes/admin.screening.$studyId._index";
import * as screeningRound from "../../app/routes/admin.screening.$studyId.rounds.$number";
import * as screeningFile from "../../app/routes/admin.screening.$studyId.files.$file";
import * as expertAdmin from "../../app/routes/admin.expert-ratings._index";
import * as mentatBank from "../../app/routes/admin.mentat.$bankId._index";
import * as mentatExport from "../../app/routes/admin.mentat.$bankId.export";
import * as reviewSet from "../../app/routes/admin.case-review.$setId._index";
import * as reviewReport from "../../app/routes/admin.case-review.$setId.report[.]json";
import * as gradingSets from "../../app/routes/admin.grading._index";
import * as gradingSet from "../../app/routes/admin.grading.$setId._index";
import * as gradingFile from "../../app/routes/admin.grading.$setId.files.$file";
import * as annotateList from "../../app/routes/annotate._index";
import * as adjudicateList from "../../app/routes/adjudicate._index";
import * as judgeRaterList from "../../app/routes/judge-validation._index";
import * as screeningList from "../../app/routes/screening._index";
import * as expertList from "../../app/routes/expert-ratings._index";
import * as mentatQuestion from "../../app/routes/mentat.$questionId";
import * as reviewItem from "../../app/routes/case-review.$itemId";

const BASE = "http://concord.test";
/** Every record an import writes here carries this, in its id or name: no reader may show it. */
const MARK = "planted";
const RECORDS = 1500;

type Loader = (args: LoaderFunctionArgs) => unknown;
type Who = "admin" | "annotator1" | "adjudicator" | "rater1" | "rater2" | "rater3";

let root: string;
let basePath: string;
const cookies = new Map<Who, string>();
/** Ids of the baseline's parents, by kind. */
const ids = { gradingSet: 0, judge: 0 };

/** What a reader answered, with the times of the call taken out. */
const normalise = (s: string) =>
  s
    .replace(/\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?Z?( UTC)?/g, "<time>")
    .replace(/\b1\d{12}\b/g, "<ms>")
    .replace(/"durationMs":\d+/g, "")
    // A chart's clip ids count the charts drawn so far; a suggested seed is drawn at random.
    .replace(/clip\d+/g, "clip")
    .replace(/"suggestedSeed":\d+/g, "");

async function answer(out: unknown): Promise<string> {
  if (out instanceof Response) return `${out.status} ${out.headers.get("location") ?? ""} ${await out.text()}`;
  return JSON.stringify(out);
}

/** Calls a route's loader as `who`: what it answered, or the status it threw. */
async function load(mod: { loader: Loader }, who: Who, url: string, params: Record<string, string>): Promise<string> {
  const request = new Request(BASE + url, { headers: { Cookie: cookies.get(who)! } });
  try {
    return normalise(await answer(await mod.loader({ request, params, context: {} })));
  } catch (error) {
    if (error instanceof Response) return `thrown ${error.status}`;
    if (error instanceof ServiceError) return `refused ${error.status}`;
    throw error;
  }
}

async function cli(argv: string[]): Promise<string> {
  let out = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (out += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return normalise(`${code} ${out}`.replaceAll(root, "<root>").replace(/out-\d+/g, "out"));
}

/** The files a command wrote into `dir` (a folder or one file), by name, with their contents. */
function folder(dir: string): string {
  if (!existsSync(dir)) return "(nothing written)";
  if (statSync(dir).isFile()) return normalise(readFileSync(dir, "utf8"));
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.endsWith(".png"))
    .map((e) => join(e.parentPath, e.name))
    .sort()
    .map((f) => `== ${f.slice(dir.length)}\n${normalise(readFileSync(f, "utf8"))}`)
    .join("\n");
}

let outDirs = 0;
const outDir = () => join(root, `out-${++outDirs}`);

interface Page {
  name: string;
  read: (db: Db) => Promise<string>;
}

/** Every page that lists or summarises rows an import writes, as the role that reads it. */
const PAGES: Page[] = [
  { name: "admin home", read: () => load(adminHome, "admin", "/admin", {}) },
  { name: "study page", read: () => load(studyPage, "admin", "/admin/studies/1", { studyId: "1" }) },
  { name: "study progress", read: () => load(studyProgress, "admin", "/admin/studies/1/progress", { studyId: "1" }) },
  { name: "study statistics", read: () => load(studyStats, "admin", "/admin/studies/1/stats", { studyId: "1" }) },
  { name: "rater quality", read: () => load(studyQuality, "admin", "/admin/studies/1/quality", { studyId: "1" }) },
  ...["data_gt.json", "samples.json", "data.csv", "manifest.json"].map((file) => ({
    name: `study export ${file}`,
    read: () => load(studyExport, "admin", `/admin/studies/1/export?file=${file}&allowPartial=1`, { studyId: "1" }),
  })),
  { name: "judge sets", read: () => load(judgeSets, "admin", "/admin/judge-validation", {}) },
  ...[1, 2].flatMap((id) => [
    {
      name: `judge set ${id}`,
      read: () => load(judgeSet, "admin", `/admin/judge-validation/${id}`, { setId: String(id) }),
    },
    {
      name: `judge report ${id}`,
      read: () => load(judgeReport, "admin", `/admin/judge-validation/${id}/report`, { setId: String(id) }),
    },
    ...["summary.json", "key.csv", "labels.csv"].map((file) => ({
      name: `judge export ${id} ${file}`,
      read: () =>
        load(judgeExport, "admin", `/admin/judge-validation/${id}/export/${file}`, { setId: String(id), file }),
    })),
  ]),
  { name: "screening studies", read: () => load(screeningStudies, "admin", "/admin/screening", {}) },
  { name: "screening study", read: () => load(screeningStudy, "admin", "/admin/screening/1", { studyId: "1" }) },
  {
    name: "screening round",
    read: () => load(screeningRound, "admin", "/admin/screening/1/rounds/1", { studyId: "1", number: "1" }),
  },
  ...["included.jsonl", "categories.csv", "manifest.json", "recall-pool.csv"].map((file) => ({
    name: `screening file ${file}`,
    read: () =>
      load(screeningFile, "admin", `/admin/screening/1/files/${file}?allowIncomplete=1`, { studyId: "1", file }),
  })),
  { name: "expert ratings (admin)", read: () => load(expertAdmin, "admin", "/admin/expert-ratings", {}) },
  ...[1, 2].flatMap((id) => [
    { name: `bank ${id}`, read: () => load(mentatBank, "admin", `/admin/mentat/${id}`, { bankId: String(id) }) },
    {
      name: `bank ${id} export`,
      read: () =>
        load(mentatExport, "admin", `/admin/mentat/${id}/export?set=gender&allowIntended=1`, { bankId: String(id) }),
    },
  ]),
  { name: "review set", read: () => load(reviewSet, "admin", "/admin/case-review/1", { setId: "1" }) },
  {
    name: "review report",
    read: () => load(reviewReport, "admin", "/admin/case-review/1/report.json", { setId: "1" }),
  },
  { name: "grading sets", read: () => load(gradingSets, "admin", "/admin/grading", {}) },
  {
    name: "grading set",
    read: () => load(gradingSet, "admin", `/admin/grading/${ids.gradingSet}`, { setId: String(ids.gradingSet) }),
  },
  ...["table1.csv", "manifest.json"].map((file) => ({
    name: `grading file ${file}`,
    read: () =>
      load(gradingFile, "admin", `/admin/grading/${ids.gradingSet}/files/${file}`, {
        setId: String(ids.gradingSet),
        file,
      }),
  })),
  { name: "annotator's list", read: () => load(annotateList, "annotator1", "/annotate", {}) },
  { name: "adjudicator's list", read: () => load(adjudicateList, "adjudicator", "/adjudicate", {}) },
  ...(["rater1", "rater2", "rater3"] as const).flatMap((who) => [
    { name: `${who}'s judge validation`, read: () => load(judgeRaterList, who, "/judge-validation", {}) },
    { name: `${who}'s screening`, read: () => load(screeningList, who, "/screening", {}) },
    { name: `${who}'s expert ratings`, read: () => load(expertList, who, "/expert-ratings", {}) },
  ]),
];

/** The commands that read them, writing into a fresh folder. */
const COMMANDS: Page[] = [
  {
    name: "export-gold",
    read: async () => {
      const out = outDir();
      return (await cli(["export-gold", "--study", DEMO_STUDY, "--out", out, "--allow-partial"])) + folder(out);
    },
  },
  { name: "stats", read: () => cli(["stats", "--study", DEMO_STUDY]) },
  {
    name: "judge-export",
    read: async () => {
      const out = outDir();
      return (await cli(["judge-export", "--set", DEMO_JUDGE_SET, "--out", out])) + folder(out);
    },
  },
  { name: "judge-report", read: () => cli(["judge-report", "--set", DEMO_JUDGE_SET]) },
  { name: "screening-report", read: () => cli(["screening-report", "--study", DEMO_SCREENING_STUDY]) },
  {
    name: "mentat-export",
    read: async () => {
      const out = `${outDir()}.jsonl`;
      return (
        (await cli([
          "mentat-export",
          "--bank",
          DEMO_MENTAT_BANK,
          "--set",
          "gender",
          "--allow-intended",
          "--out",
          out,
        ])) + folder(out)
      );
    },
  },
  { name: "casereview-report", read: () => cli(["casereview-report", "--set", DEMO_REVIEW_SET]) },
  { name: "grade-status", read: () => cli(["grade-status", "--set", "grading"]) },
  {
    name: "grade-report",
    read: async () => {
      const out = outDir();
      return (await cli(["grade-report", "--set", "grading", "--out", out])) + folder(out);
    },
  },
];

interface ById {
  /** The table whose hidden rows are asked for by id. */
  table: keyof typeof VISIBLE_VIEWS;
  name: string;
  read: (db: Db, id: number) => Promise<string>;
}

const adminId = (db: Db) => db.$client.prepare("select id from users where username = 'admin'").pluck().get() as string;

const thrown = async (f: () => unknown): Promise<string> => {
  try {
    return answer(await f());
  } catch (error) {
    if (error instanceof ServiceError) return `refused ${error.status}`;
    throw error;
  }
};

/** Pages and services asked for one row by its id: a hidden row is not found. */
const BY_ID: ById[] = [
  {
    table: "cases",
    name: "case page",
    read: (_, id) => load(adminCase, "admin", `/admin/cases/${id}`, { caseId: `${id}` }),
  },
  {
    table: "cases",
    name: "case export",
    read: (_, id) => load(adminCaseExport, "admin", `/admin/cases/${id}/export`, { caseId: `${id}` }),
  },
  {
    table: "studies",
    name: "study page",
    read: (_, id) => load(studyPage, "admin", `/admin/studies/${id}`, { studyId: `${id}` }),
  },
  {
    table: "judge_sets",
    name: "judge set page",
    read: (_, id) => load(judgeSet, "admin", `/admin/judge-validation/${id}`, { setId: `${id}` }),
  },
  {
    table: "judge_sets",
    name: "judge set export (service)",
    read: (db, id) => thrown(() => exportSetFile(db, id, "summary.json")),
  },
  {
    table: "judge_sets",
    name: "judge set export key (service)",
    read: async (db, id) =>
      (await thrown(() => exportSetFile(db, id, "key.csv"))).includes(MARK) ? "shown" : "refused 404",
  },
  {
    table: "judge_sets",
    name: "judge set sample (services)",
    read: async (db, id) =>
      listSampledItems(db, id).length + sampledRows(db, id).length === 0 ? "refused 404" : "shown",
  },
  // Changes asked for by id: a hidden parent is not found, so nothing is written under it.
  {
    table: "judge_sets",
    name: "drawing a sample (service)",
    read: (db, id) => thrown(() => drawSample(db, { setId: id, seed: 7, actorId: null })),
  },
  {
    table: "studies",
    name: "the adjudication mode (service)",
    read: (db, id) =>
      thrown(() => setAdjudicationMode(db, { studyId: id, mode: "independent_only", actorId: adminId(db) })),
  },
  {
    table: "studies",
    name: "rater quality settings (service)",
    read: (db, id) =>
      thrown(() =>
        setQualitySettings(db, {
          studyId: id,
          settings: { ...QUALITY_OFF, retestFraction: 0.2 },
          actorId: null,
        }),
      ),
  },
  {
    table: "screening_studies",
    name: "screening study page",
    read: (_, id) => load(screeningStudy, "admin", `/admin/screening/${id}`, { studyId: `${id}` }),
  },
  {
    table: "mentat_banks",
    name: "bank page",
    read: (_, id) => load(mentatBank, "admin", `/admin/mentat/${id}`, { bankId: `${id}` }),
  },
  {
    table: "review_sets",
    name: "review set page",
    read: (_, id) => load(reviewSet, "admin", `/admin/case-review/${id}`, { setId: `${id}` }),
  },
  ...(["rater1", "rater2", "rater3"] as const).flatMap((who): ById[] => [
    {
      table: "mentat_questions",
      name: `${who}'s question page`,
      read: (_, id) => load(mentatQuestion, who, `/mentat/${id}`, { questionId: `${id}` }),
    },
    {
      table: "review_items",
      name: `${who}'s review item page`,
      read: (_, id) => load(reviewItem, who, `/case-review/${id}`, { itemId: `${id}` }),
    },
  ]),
];

// The files of the imports: every record's id or name carries MARK.
const CASE_HEADER =
  "id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam,psychological_exam,secondary_diagnoses";
const caseFile = (n: number) =>
  [
    CASE_HEADER,
    ...Array.from(
      { length: n },
      (_, i) => `${MARK}-${i},28-37,F,Low mood for three weeks and early waking ${i},None,Slowed,,`,
    ),
  ].join("\n") + "\n";
const responsesFile = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `${MARK}-${Math.floor(i / 4)}`,
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
  ).join("\n") + "\n";
const screeningFile_ = (n: number) =>
  itemsJsonl(
    Array.from({ length: n }, (_, i): CorpusItem => ({
      id: `${MARK}-${i}`,
      label: "relevant",
      truth: true,
      text: `I have been sleeping badly for ${i} nights`,
    })),
  );
const reviewFile = (n: number) =>
  `id,kind,case_type,diagnosis,seed_id,text\n${MARK}-s,seed,I,Major depressive disorder,,Seed: low mood for three weeks.\n` +
  Array.from(
    { length: n - 1 },
    (_, i) => `${MARK}-${i},case,I,Major depressive disorder,${MARK}-s,"Case ${i}: low mood, early waking."`,
  ).join("\n") +
  "\n";
const questionsFile = (n: number) =>
  "id,domain,question,he,she,they,a,b,c,d,e,answer,notes\n" +
  Array.from(
    { length: n },
    (_, i) =>
      `${MARK}-${i},triage,"A patient (${i}) stopped sleeping for four days. What is the next step?",,,,Urgent evaluation,Routine visit,Sleep aid,Reassure,Wait,a,`,
  ).join("\n") +
  "\n";
const GRADING = { conversations: 200, criteria: 10 };
const batchOutput = () =>
  Array.from({ length: GRADING.conversations * GRADING.criteria }, (_, k) => {
    const [r, c] = [Math.floor(k / GRADING.criteria) + 1, k % GRADING.criteria];
    return JSON.stringify({
      id: `b-${r}-${c}`,
      custom_id: customId(r, c, ids.judge),
      response: {
        status_code: 200,
        body: {
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: JSON.stringify({ explanation: MARK, criteria_met: true }) },
              finish_reason: "stop",
            },
          ],
        },
      },
      error: null,
    });
  }).join("\n") + "\n";

interface Kind {
  /** What is imported, and where. */
  name: string;
  /** The child's KIND and NAME (test/support/hidden-import-child.ts). */
  child: [string, string | (() => string)];
  file: () => string;
}

/** Every kind of import that writes behind a run: into a new parent and into an existing one. */
const KINDS: Kind[] = [
  { name: "cases into a new study", child: ["cases", `${MARK} study`], file: () => caseFile(5000) },
  { name: "cases into the demo study", child: ["cases", DEMO_STUDY], file: () => caseFile(5000) },
  { name: "responses into a new judge set", child: ["judge", `${MARK} set`], file: () => responsesFile(RECORDS) },
  { name: "responses into a drafting judge set", child: ["judge", "Drafting set"], file: () => responsesFile(RECORDS) },
  {
    name: "items into a new screening study",
    child: ["screening", `${MARK} screening`],
    file: () => screeningFile_(RECORDS),
  },
  {
    name: "items into a screening study",
    child: ["screening-existing", "Open screening"],
    file: () => screeningFile_(RECORDS),
  },
  { name: "cases into a new review set", child: ["casereview", `${MARK} review`], file: () => reviewFile(RECORDS) },
  { name: "cases into the demo review set", child: ["casereview", DEMO_REVIEW_SET], file: () => reviewFile(RECORDS) },
  { name: "questions into a new bank", child: ["mentat", `${MARK} bank`], file: () => questionsFile(RECORDS) },
  { name: "questions into the demo bank", child: ["mentat", DEMO_MENTAT_BANK], file: () => questionsFile(RECORDS) },
  {
    name: "an expert's ratings into a bank",
    child: ["mentat-ratings", "Ratings bank"],
    file: () => mentatRatingsCsv("X2", 400),
  },
  { name: "a judge's verdicts (grade-batch-ingest)", child: ["grading", () => String(ids.judge)], file: batchOutput },
];

/** How many rows of each hidden-capable table a reader does not see. */
function hiddenCounts(db: Db): Record<string, number> {
  const $ = db.$client;
  return Object.fromEntries(
    Object.keys(VISIBLE_VIEWS).map((t) => [
      t,
      $.prepare(`select (select count(*) from ${t}) - (select count(*) from visible_${t})`).pluck().get() as number,
    ]),
  );
}

/** Where two answers first differ, with some text of each around it; null when they are the same. */
function firstDifference(now: string, then: string): { now: string; before: string } | null {
  if (now === then) return null;
  let i = 0;
  while (now[i] === then[i]) i++;
  return { now: now.slice(Math.max(0, i - 120), i + 120), before: then.slice(Math.max(0, i - 120), i + 120) };
}

/** The baseline's answers, by reader. */
const before = new Map<string, string>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "concord-unfinished-"));
  basePath = join(root, "base.db");
  const db = openDatabase(basePath);
  setDb(db);
  await seedDemo(db);
  // A drafting judge set, a screening study without rounds, a bank with one expert's ratings, a grading set with a
  // candidate's responses and a judge: the parents the imports into existing parents write under.
  expect(
    importResponses(db, {
      setName: "Drafting set",
      files: [{ bytes: new TextEncoder().encode(responsesFile(8).replaceAll(MARK, "old")), filename: "old.jsonl" }],
      actorId: null,
    }),
  ).toMatchObject({ ok: true });
  for (const r of ["x1", "x2"]) await makeUser(db, r, ["rater"]);
  expect(importQuestionBank(db, { bankName: "Ratings bank", text: mentatBankCsv(400), actorId: null })).toMatchObject({
    ok: true,
  });
  expect(
    importMentatAnnotations(db, {
      files: [{ name: "x1.csv", text: mentatRatingsCsv("X1", 400) }],
      options: { bankName: "Ratings bank" },
      actorId: null,
    }),
  ).toMatchObject({ ok: true });
  seedScreening(db);
  seedGrading(db);
  for (const who of ["admin", "annotator1", "adjudicator", "rater1", "rater2", "rater3"] as const) {
    const r = await login(db, { username: who, password: DEMO_PASSWORD, ip: "192.0.2.1" });
    if (!r.ok) throw new Error(r.error);
    cookies.set(who, r.sessionCookie.split(";")[0]!);
  }
  // The copy each kind starts from (a whole file: the workers that read it hold connections of their own).
  db.$client.exec(`vacuum into '${basePath}.snapshot'`);
  for (const r of [...PAGES, ...COMMANDS]) before.set(r.name, await r.read(db));
  setDb(undefined);
  db.$client.close();
}, 300_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

function seedScreening(db: Db) {
  const items = Array.from({ length: 4 }, (_, i): CorpusItem => ({
    id: `o${i}`,
    label: "relevant",
    truth: true,
    text: `Item ${i}`,
  }));
  importIntoNewScreeningStudy(db, {
    name: "Open screening",
    settings: SETTINGS,
    items: { bytes: new TextEncoder().encode(itemsJsonl(items)), filename: "open.jsonl" },
    actorId: null,
  });
}

function seedGrading(db: Db) {
  const $ = db.$client;
  $.prepare(
    "insert into grading_sets (name, source_sha256, content_sha256, created_at) values ('grading', 'x', 'x', 0)",
  ).run();
  ids.gradingSet = $.prepare("select id from grading_sets where name = 'grading'").pluck().get() as number;
  const model = $.prepare(
    "insert into grading_models (set_id, role, name, model, base_url, max_tokens, max_tokens_param, created_at) values (?, ?, ?, 'm', 'u', 100, 'max_tokens', 0)",
  );
  const candidate = Number(model.run(ids.gradingSet, "candidate", "c").lastInsertRowid);
  ids.judge = Number(model.run(ids.gradingSet, "judge", "j").lastInsertRowid);
  db.transaction(() => {
    for (let i = 1; i <= GRADING.conversations; i++) {
      $.prepare(
        "insert into grading_conversations (id, set_id, prompt_id, position, prompt, example_tags, content_hash) values (?, ?, ?, ?, '[]', '[]', 'h')",
      ).run(i, ids.gradingSet, `p${i}`, i);
      for (let c = 0; c < GRADING.criteria; c++)
        $.prepare(
          "insert into grading_criteria (conversation_id, idx, criterion, points, tags) values (?, ?, 'a criterion', 1, '[]')",
        ).run(i, c);
      $.prepare(
        "insert into grading_responses (id, candidate_id, conversation_id, text, created_at) values (?, ?, ?, 'an answer', 0)",
      ).run(i, candidate, i);
    }
  });
}

describe.each(KINDS)("a half-written import of $name", (kind) => {
  let db: Db;
  let path: string;
  beforeAll(async () => {
    path = join(root, `${kind.child[0]}-${kind.name.length}.db`);
    copyFileSync(`${basePath}.snapshot`, path);
    const ext = ["judge", "screening", "screening-existing", "grading"].includes(kind.child[0]) ? "jsonl" : "csv";
    const file = join(root, `${kind.name.replace(/\W+/g, "-")}.${ext}`);
    writeFileSync(file, kind.file());
    const name = typeof kind.child[1] === "function" ? kind.child[1]() : kind.child[1];
    const killed = await runImportChild([kind.child[0], path, file, name, "1", "kill-after-chunk"]);
    expect(killed.signal, killed.out).toBe("SIGKILL");
    db = openDatabase(path);
    setDb(db);
  }, 120_000);

  it("is in the database, hidden", () => {
    const hidden = hiddenCounts(db);
    expect(Object.values(hidden).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });

  it.each([...PAGES, ...COMMANDS])("$name answers as before it started", async (reader) => {
    const now = await reader.read(db);
    expect(firstDifference(now, before.get(reader.name)!)).toBeNull();
    expect(now).not.toContain(MARK);
  });

  it.each(BY_ID)("$name does not find its hidden rows by id", async (reader) => {
    const hiddenIds = db.$client
      .prepare(`select id from ${reader.table} except select id from visible_${reader.table}`)
      .pluck()
      .all() as number[];
    for (const id of hiddenIds.slice(0, 3))
      expect(await reader.read(db, id), `${reader.table} ${id}`).toMatch(/^(thrown|refused) 404|^404 /);
  });
});
