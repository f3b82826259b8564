/**
 * The demo study: fictional notes (app/demo/demo-notes.jsonl, written for the demo) and an account for every role.
 * Seeded only into a fresh database, and recognised afterwards by the `demo` fact in app_meta: it never touches a
 * database that holds real work.
 */
import { readFileSync } from "node:fs";
import { eq } from "drizzle-orm";
import { readJsonlValues } from "../formats/jsonl";
import { appMeta, users, type Role } from "../../db/schema";
import type { Db } from "../platform/db.server";
import { fromRoot } from "../platform/paths.server";
import { asc } from "drizzle-orm";
import { assignments } from "../../db/schema";
import { visibleCases } from "../../db/schema-visible";
import { decide, getAdjudicationCase, listAdjudicationQueue, recordIndependent } from "../adjudication/adjudication.server";
import { settleDueLocks, submitAnnotation, type AnnotationValues } from "../annotation/annotations.server";
import { autoAssign, listStudyAnnotators } from "../annotation/assignments.server";
import { importCases, requireStudyByName } from "../annotation/studies.server";
import { insertUser } from "../accounts/users.server";
import { isFreshDatabase } from "../platform/startup.server";
import { hashPassword } from "../accounts/password.server";
import { BUCKET_SAMPLING_ORDER, type ValidationBucket } from "../judge-validation/domain/validation-set";
import { drawSample } from "../judge-validation/judge-sample.server";
import { importResponses } from "../judge-validation/judge-responses.server";
import { startRating } from "../judge-validation/judge-raters.server";
import { getRaterItem, listRaterItems, submitRating, type RatingValues } from "../judge-validation/judge-ratings.server";
import { createScreeningStudy } from "../screening/screening.server";
import { importScreeningFiles } from "../screening/screening-import.server";
import { openRound } from "../screening/screening-rounds.server";
import { addBankRaters } from "../mentat/panel.server";
import { importQuestionBank } from "../mentat/banks.server";
import { addReviewRaters, importReviewSet } from "../case-review/case-review.server";
import { importRunFolders } from "../evaluation/evaluations.server";
import { sendReview } from "../evaluation/model-review.server";

export const DEMO_STUDY = "Demo study";
export const DEMO_PASSWORD = "concord-demo";
export const DEMO_ACCOUNTS: { username: string; displayName: string; roles: Role[] }[] = [
  { username: "admin", displayName: "Study manager (demo)", roles: ["admin"] },
  { username: "annotator1", displayName: "Dr Annotator One", roles: ["annotator"] },
  { username: "annotator2", displayName: "Dr Annotator Two", roles: ["annotator"] },
  { username: "annotator3", displayName: "Dr Annotator Three", roles: ["annotator"] },
  { username: "adjudicator", displayName: "Dr Senior Adjudicator", roles: ["adjudicator"] },
  { username: "rater1", displayName: "Rater One", roles: ["rater"] },
  { username: "rater2", displayName: "Rater Two", roles: ["rater"] },
  { username: "rater3", displayName: "Rater Three", roles: ["rater"] },
];

export function isDemoDatabase(db: Db): boolean {
  return db.select().from(appMeta).where(eq(appMeta.key, "demo")).get()?.value === "1";
}

export function demoNotesBytes(): Uint8Array {
  return readFileSync(fromRoot("app", "demo", "demo-notes.jsonl"));
}

/** Seeds the demo into a fresh database. Returns false (and does nothing) for any other database. */
export async function seedDemo(db: Db): Promise<boolean> {
  if (!isFreshDatabase(db)) return false;
  // The hashes first (they take time and need no lock), then the whole demo in one transaction: a start that fails
  // half way — a full disk — leaves a fresh database, not a half-seeded demo (docs/reliability.md).
  const hashes: string[] = [];
  for (const _ of DEMO_ACCOUNTS) hashes.push(await hashPassword(DEMO_PASSWORD));
  return db.$client.transaction(() => {
    if (!isFreshDatabase(db)) return false;
    seedDemoRows(db, hashes);
    return true;
  }).immediate();
}

function seedDemoRows(db: Db, hashes: string[]): void {
  db.insert(appMeta).values({ key: "demo", value: "1" }).run();
  DEMO_ACCOUNTS.forEach((account, i) => insertUser(db, { ...account, passwordHash: hashes[i]!, actorId: null }));
  const admin = db.select({ id: users.id }).from(users).where(eq(users.username, "admin")).get()!;
  const result = importCases(db, {
    studyName: DEMO_STUDY,
    bytes: demoNotesBytes(),
    filename: "demo-notes.jsonl",
    actorId: admin.id,
  });
  if (!result.written)
    throw new Error("The demo notes failed to import: " + JSON.stringify(result.parse.errors.slice(0, 3)));
  const study = requireStudyByName(db, DEMO_STUDY);
  const annotatorIds = listStudyAnnotators(db, study.id).map((a) => a.id);
  autoAssign(db, { studyId: study.id, annotatorIds, seed: 1, actorId: admin.id });
  annotateDemo(db, study.id);
  seedRaterDemo(db, admin.id);
  seedEvaluationDemo(db, admin.id, study.id);
}

export const DEMO_EVALUATION = "Demo evaluation";
export const DEMO_MODEL_REVIEW = "Demo clinician review";

/**
 * An evaluation of one fictional model on twelve demo notes (app/demo/demo-eval/: a data_gt.json and one run folder,
 * written once by the tests' seeded run generator, test/support/eval-runs.ts), and a clinician review of its steps
 * sent to the three demo annotators, two per step (docs/evaluation.md, "Clinician review of model steps").
 */
function seedEvaluationDemo(db: Db, adminId: string, studyId: number): void {
  const imported = importRunFolders(db, {
    evaluation: DEMO_EVALUATION,
    create: { goldFile: fromRoot("app", "demo", "demo-eval", "data_gt.json"), studyId },
    dirs: [fromRoot("app", "demo", "demo-eval", "runs")],
    actor: adminId,
  });
  if (imported.evaluationId === null)
    throw new Error(`The demo evaluation failed to import: ${JSON.stringify(imported.problems).slice(0, 500)}`);
  sendReview(db, {
    evaluationId: imported.evaluationId,
    name: DEMO_MODEL_REVIEW,
    filter: { failure: "", model: "", strategy: "", q: "" },
    reviewers: ["annotator1", "annotator2", "annotator3"],
    perItem: 2,
    seed: 5,
    actorId: adminId,
  });
}

interface DemoLabel {
  sufficiency: "sufficient" | "insufficient";
  icd10: string | null;
  earliest_section: number | null;
  missing_info: string[];
}

function demoValues(l: DemoLabel): AnnotationValues {
  return {
    sufficiency: l.sufficiency,
    icd10: l.icd10 ?? "",
    earliestSection: l.earliest_section,
    missingInfo: l.missing_info,
    missingOther: l.missing_info.includes("other") ? "see notes" : "",
    notes: "",
  };
}

/** How much of the demo is already done on first start: enough for every page and export to show something. */
export const DEMO_ANNOTATED_CASES = 28;

/**
 * Pre-fills the demo as a study in progress: the first cases annotated by both of their annotators (one with the
 * note's intended label, the other with its plausible alternative on every other case, so some agree and some are
 * in dispute), half of the disputes adjudicated, and one more case with a single submission.
 */
function annotateDemo(db: Db, studyId: number): void {
  const intended = new Map<string, { intended: DemoLabel & { plausible_alternative: DemoLabel } }>();
  for (const value of readJsonlValues(new TextDecoder().decode(demoNotesBytes()), "demo notes")) {
    const o = value as { id: string; intended: DemoLabel & { plausible_alternative: DemoLabel } };
    intended.set(o.id, o);
  }
  const rows = db
    .select({ caseId: visibleCases.id, externalId: visibleCases.externalId, annotatorId: assignments.annotatorId })
    .from(visibleCases)
    .innerJoin(assignments, eq(assignments.caseId, visibleCases.id))
    .where(eq(visibleCases.studyId, studyId))
    .orderBy(asc(visibleCases.position), asc(assignments.id))
    .all();
  const byCase = new Map<number, { externalId: string; annotators: string[] }>();
  for (const r of rows) {
    const c = byCase.get(r.caseId) ?? { externalId: r.externalId, annotators: [] };
    c.annotators.push(r.annotatorId);
    byCase.set(r.caseId, c);
  }
  let i = 0;
  for (const [caseId, c] of byCase) {
    const note = intended.get(c.externalId)!.intended;
    const [first, second] = c.annotators as [string, string];
    if (i < DEMO_ANNOTATED_CASES) {
      submitAnnotation(db, { userId: first, caseId, values: demoValues(note), version: 0 });
      const other = i % 2 === 0 ? note.plausible_alternative : note;
      submitAnnotation(db, { userId: second, caseId, values: demoValues(other), version: 0 });
    } else if (i === DEMO_ANNOTATED_CASES) {
      submitAnnotation(db, { userId: first, caseId, values: demoValues(note), version: 0 });
    }
    i++;
  }
  // The demo's pairs lock now, not after the grace period (docs/safe-psych.md, "Second chances").
  settleDueLocks(db, Number.MAX_SAFE_INTEGER);
  const adjudicator = db.select({ id: users.id }).from(users).where(eq(users.username, "adjudicator")).get()!;
  const queue = listAdjudicationQueue(db, adjudicator.id);
  for (const q of queue.slice(0, Math.ceil(queue.length / 2))) {
    const note = intended.get(q.externalId)!.intended;
    const label = { ...demoValues(note), sufficiency: note.sufficiency as "sufficient" | "insufficient" };
    recordIndependent(db, { userId: adjudicator.id, caseId: q.caseId, label });
    const outcomeVersion = getAdjudicationCase(db, { userId: adjudicator.id, caseId: q.caseId })!.outcomeVersion;
    decide(db, { userId: adjudicator.id, caseId: q.caseId, label, rationale: "", outcomeVersion });
  }
}

export const DEMO_JUDGE_SET = "Demo judge validation";
export const DEMO_SCREENING_STUDY = "Demo screening";
export const DEMO_MENTAT_BANK = "Demo expert questions";
export const DEMO_REVIEW_SET = "Demo generated cases";
/** Responses drawn per validation bucket: a sample of about two dozen from the 40 demo responses. */
const DEMO_JUDGE_TARGET = 3;

function demoFile(name: string): Uint8Array {
  return readFileSync(fromRoot("app", "demo", name));
}

function demoText(name: string): string {
  return new TextDecoder().decode(demoFile(name));
}

/**
 * The raters' side of the demo (fictional files in app/demo/): a judge-validation set sampled and being rated by the
 * three demo raters (two responses already labelled), a screening study with round 1 open for them, and an expert
 * question bank and a case-review set with them on both panels. Fixed seeds: the same demo every time.
 */
function seedRaterDemo(db: Db, adminId: string): void {
  const raterIds = ["rater1", "rater2", "rater3"].map(
    (username) => db.select({ id: users.id }).from(users).where(eq(users.username, username)).get()!.id,
  );
  const fail = (what: string, detail: unknown) => {
    throw new Error(`The demo ${what} failed to import: ${JSON.stringify(detail).slice(0, 500)}`);
  };

  // Judge validation: import, draw, rate.
  const responses = importResponses(db, {
    setName: DEMO_JUDGE_SET,
    files: [{ bytes: demoFile("demo-judge-responses.jsonl"), filename: "demo-judge-responses.jsonl" }],
    actorId: adminId,
  });
  if (!responses.ok || responses.setId === null) fail("judge responses", responses.refusal ?? responses.files);
  const setId = responses.setId!;
  const targets = Object.fromEntries(BUCKET_SAMPLING_ORDER.map((b) => [b, DEMO_JUDGE_TARGET])) as Record<
    ValidationBucket,
    number
  >;
  drawSample(db, { setId, seed: 123, targets, actorId: adminId });
  startRating(db, { setId, raterIds, seed: 1, actorId: adminId });
  prelabelJudgeItems(db, raterIds);

  // Screening review: a study, its items and the screen's labels, round 1 open for the three raters.
  const screening = createScreeningStudy(db, {
    name: DEMO_SCREENING_STUDY,
    settings: {
      description: "Fictional health questions: which are about mental health? (demo)",
      inclusionCriterion:
        "Relevant: the user asks about their own or someone else's mental health — mood, anxiety, psychosis, substance use, sleep as a psychiatric symptom, self-harm or suicide, or psychiatric medication. Not relevant: questions about physical health only, even when stress is mentioned in passing.",
      categories: ["mood", "anxiety", "psychosis", "substance use", "sleep", "other"],
      reviewersPerRound: 3,
      inclusionVotes: 2,
      controlThreshold: 0.05,
      controlsPerRound: 5,
    },
    actorId: adminId,
  });
  const imported = importScreeningFiles(db, {
    studyId: screening.id,
    items: { bytes: demoFile("demo-screening-items.jsonl"), filename: "demo-screening-items.jsonl" },
    labels: { bytes: demoFile("demo-screening-labels.csv"), filename: "demo-screening-labels.csv" },
    actorId: adminId,
  });
  if (!imported.ok) fail("screening items", imported.files);
  openRound(db, { studyId: screening.id, reviewerIds: raterIds, seed: 7, controls: 5, actorId: adminId });

  // Expert ratings: a MENTAT-style question bank and a MentalBench-style case-review set, the raters on both panels.
  const bank = importQuestionBank(db, {
    bankName: DEMO_MENTAT_BANK,
    text: demoText("demo-mentat-questions.csv"),
    actorId: adminId,
    seed: 11,
  });
  if (!bank.ok || bank.bankId === null) fail("expert questions", bank.ok ? bank : bank.errors);
  addBankRaters(db, { bankId: (bank as { bankId: number }).bankId, raterIds, actorId: adminId });
  const review = importReviewSet(db, {
    setName: DEMO_REVIEW_SET,
    text: demoText("demo-case-review.csv"),
    actorId: adminId,
  });
  if (!review.ok || review.setId === null) fail("review cases", review.ok ? review : review.errors);
  addReviewRaters(db, { setId: (review as { setId: number }).setId, raterIds, actorId: adminId });
}

/**
 * rater2 labels the first two sampled responses and rater3 the first, each as the response's first parse reads it,
 * so the set's progress and report show something from the start.
 */
function prelabelJudgeItems(db: Db, raterIds: string[]): void {
  const features = new Map<string, Record<string, unknown>>();
  for (const value of readJsonlValues(demoText("demo-judge-responses.jsonl"), "demo-judge-responses.jsonl")) {
    const o = value as { response: string; features: Record<string, unknown> };
    features.set(o.response, o.features);
  }
  const label = (raterId: string, count: number) => {
    for (const row of listRaterItems(db, raterId).slice(0, count)) {
      const view = getRaterItem(db, { raterId, itemId: row.itemId })!;
      const f = features.get(view.item.text) ?? {};
      const values: RatingValues = {
        primaryAnswer: (f.primary_answer ?? "none") as RatingValues["primaryAnswer"],
        infoRequest: (f.info_request ?? "none") as RatingValues["infoRequest"],
        icdCodes: ((f.icd_codes ?? []) as string[]).join(", "),
        diagnosisNames: ((f.diagnosis_names ?? []) as string[]).join(", "),
        notes: "",
      };
      const r = submitRating(db, { raterId, itemId: row.itemId, values, version: view.version });
      if (!r.ok) throw new Error(`The demo rating failed: ${JSON.stringify(r)}`);
    }
  };
  label(raterIds[1]!, 2);
  label(raterIds[2]!, 1);
}
