/**
 * The adjudicator's independent step is blind (docs/safe-psych.md, "Disagreement and adjudication"): before the
 * independent judgement is recorded, the case page's HTML and its loader data (`.data`) carry nothing derived from
 * the annotations — no dispute reason, no "disagreement on …" badge, no Annotator A/B, no annotation's code or
 * notes. Drafts of each step are saved through the action and restored, and removed when the step is recorded.
 * Against the real built app (`npm run build` first).
 */
import { asc, eq } from "drizzle-orm";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adjudicationDrafts, cases, guidelineVersions } from "../../db/schema";
import { openDatabase, type Db } from "../../app/platform/db.server";
import { submitAnnotation } from "../../app/annotation/annotations.server";
import { autoAssign } from "../../app/annotation/assignments.server";
import { importCases, requireStudyByName } from "../../app/annotation/studies.server";
import { createUser } from "../../app/accounts/users.server";
import { startApp, tempDbPath, type RunningApp } from "../support/server";
import { appSessions, expectAbsent } from "../support/sessions";
import { outcomeOf, sufficient } from "../support/labels";

const PASSWORD = "adjudication-blind-1";
const CODE_A = "F42.2";
const CODE_B = "F33.2";
const NOTE_A = "Ferret-shaped remark of the first annotator";
const NOTE_B = "Walrus-shaped remark of the second annotator";

let app: RunningApp;
let db: Db;
let dir: string;
let caseId: number;
const { csrfs, logIn, post, text } = appSessions(() => app.url, PASSWORD);

// Section texts free of the words searched for below, so that a hit can only come from the dispute.
function studyJsonl(): Uint8Array {
  const line = (i: number) =>
    JSON.stringify({
      id: `blind-${i}`,
      age_group: "28-37",
      sex: "M",
      presenting_symptoms: `Case ${i}: intrusive thoughts and checking rituals for a year.`,
      psychiatric_history: "No earlier treatment.",
      psychiatric_exam: "Anxious, no psychotic features.",
      psychological_exam: "Y-BOCS 24.",
      secondary_diagnoses: "",
    });
  return new TextEncoder().encode([1, 2].map(line).join("\n") + "\n");
}

beforeAll(async () => {
  const tmp = tempDbPath();
  dir = tmp.dir;
  db = openDatabase(tmp.dbPath);
  const make = (username: string, roles: ("annotator" | "adjudicator" | "admin")[]) =>
    createUser(db, { username, displayName: username, password: PASSWORD, roles, actorId: null });
  const [ann1, ann2, , boss] = await Promise.all([
    make("ann1", ["annotator"]),
    make("ann2", ["annotator"]),
    make("judy", ["adjudicator"]),
    make("boss", ["admin"]),
  ]);
  expect(importCases(db, { studyName: "Blind", bytes: studyJsonl(), filename: "b.jsonl", actorId: boss!.id }).ok).toBe(
    true,
  );
  const study = requireStudyByName(db, "Blind");
  // The study's guidelines are study-wide text shown to every role (they use the word "diagnosis"); this test looks
  // for what the page derives from the case's annotations, so the study has none.
  db.delete(guidelineVersions).run();
  autoAssign(db, { studyId: study.id, annotatorIds: [ann1!.id, ann2!.id], seed: 1, actorId: boss!.id });
  caseId = db
    .select({ id: cases.id })
    .from(cases)
    .where(eq(cases.studyId, study.id))
    .orderBy(asc(cases.position))
    .get()!.id;
  expect(submitAnnotation(db, { userId: ann1!.id, caseId, values: sufficient(CODE_A, 1, NOTE_A), version: 0 }).ok).toBe(
    true,
  );
  expect(submitAnnotation(db, { userId: ann2!.id, caseId, values: sufficient(CODE_B, 3, NOTE_B), version: 0 }).ok).toBe(
    true,
  );
  expect(outcomeOf(db, caseId)!.status).toBe("disputed");
  expect(outcomeOf(db, caseId)!.disputeReason).toBe("diagnosis");
  app = await startApp({ dbPath: tmp.dbPath });
  await logIn("judy");
}, 60_000);

afterAll(async () => {
  await app?.stop();
  db?.$client.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ANNOTATION_VALUES = [CODE_A, CODE_B, NOTE_A, NOTE_B, "Ferret", "Walrus"];

function draftPost(values: Record<string, unknown>, version: number) {
  return post("judy", `/adjudicate/${caseId}`, {
    csrf: csrfs.judy!,
    intent: "draft",
    version: String(version),
    values: JSON.stringify(values),
  });
}

describe("the independent step", () => {
  it("the case page and its data carry no reason, badge or annotation before the judgement", async () => {
    const html = await text("judy", `/adjudicate/${caseId}`);
    expect(html).toContain("Step 1 of 2");
    expect(html).toContain("intrusive thoughts");
    expectAbsent(
      html,
      [...ANNOTATION_VALUES, "disagreement", "Annotator A", "Annotator B", 'data-testid="annotations"'],
      "the case page",
    );
    const data = await text("judy", `/adjudicate/${caseId}.data`);
    expect(data).toContain("intrusive thoughts");
    // The loader data holds no dispute reason at all: neither the key nor either reason's value.
    expectAbsent(
      data,
      [...ANNOTATION_VALUES, '"reason"', "diagnosis", "sufficiency", "disagree", 'annotations",{'],
      "the case data",
    );
  });

  it("keeps a draft of the judgement and restores it, still without anything of the annotations", async () => {
    const draft = {
      sufficiency: "sufficient",
      icd10: "F41.1",
      earliestSection: 2,
      missingInfo: [],
      missingOther: "",
      rationale: "",
    };
    const res = await draftPost(draft, 0);
    expect(res.status).toBe(200);
    expect(db.select().from(adjudicationDrafts).where(eq(adjudicationDrafts.caseId, caseId)).get()!.version).toBe(1);
    // A stale version changes nothing.
    expect((await draftPost({ ...draft, icd10: "F40.0" }, 0)).status).toBe(409);
    const data = await text("judy", `/adjudicate/${caseId}.data`);
    expect(data).toContain("F41.1");
    expect(data).not.toContain("F40.0");
    expectAbsent(data, [...ANNOTATION_VALUES, '"reason"', "diagnosis", "disagree"], "the case data with a draft");
    const row = db.select().from(adjudicationDrafts).where(eq(adjudicationDrafts.caseId, caseId)).get()!;
    expect(row.step).toBe("independent");
  });

  it("after the judgement: the draft is gone, the reason and both annotations are shown, the differing fields marked", async () => {
    const label = { sufficiency: "sufficient", icd10: "F42.2", earliestSection: 3, missingInfo: [], missingOther: "" };
    const res = await post("judy", `/adjudicate/${caseId}`, {
      csrf: csrfs.judy!,
      intent: "submit",
      step: "independent",
      version: "1",
      values: JSON.stringify({ ...label, rationale: "" }),
      outcomeVersion: String(outcomeOf(db, caseId)!.version),
    });
    expect(res.status, await res.text()).toBe(200);
    expect(db.select().from(adjudicationDrafts).where(eq(adjudicationDrafts.caseId, caseId)).all()).toHaveLength(0);
    const html = await text("judy", `/adjudicate/${caseId}`);
    expect(html).toMatch(/disagreement on (<!-- -->)?diagnosis/);
    for (const v of [CODE_A, CODE_B, NOTE_A, NOTE_B]) expect(html).toContain(v);
    // Both codes differ from each other: marked; the earliest sections are 1, 3 and 3: marked too.
    expect(html).toMatch(/data-field="icd10" data-differs="true"/);
    expect(html).toMatch(/data-field="earliestSection" data-differs="true"/);
    expect(html).toMatch(/data-field="sufficiency" data-differs="false"/);
  });

  it("keeps a draft of the decision, with its rationale, removed by the decision", async () => {
    const draft = {
      sufficiency: "sufficient",
      icd10: "F42.2",
      earliestSection: 1,
      missingInfo: [],
      missingOther: "",
      rationale: "Rituals dominate.",
    };
    expect((await draftPost(draft, 0)).status).toBe(200);
    const data = await text("judy", `/adjudicate/${caseId}.data`);
    expect(data).toContain("Rituals dominate.");
    expect(db.select().from(adjudicationDrafts).where(eq(adjudicationDrafts.caseId, caseId)).get()!.step).toBe(
      "decide",
    );
    const res = await post("judy", `/adjudicate/${caseId}`, {
      csrf: csrfs.judy!,
      intent: "submit",
      step: "decide",
      version: "1",
      values: JSON.stringify(draft),
      outcomeVersion: String(outcomeOf(db, caseId)!.version),
    });
    expect(res.status, await res.text()).toBe(200);
    expect(db.select().from(adjudicationDrafts).where(eq(adjudicationDrafts.caseId, caseId)).all()).toHaveLength(0);
    // No draft is taken once the case is decided: it is no longer a disputed case to adjudicate.
    expect((await draftPost(draft, 0)).status).toBe(404);
  });
});
