/**
 * The translation of a preparation project (docs/preparation.md, "Translation") against the OpenAI-compatible stub:
 * the paper's prompt sent byte for byte with temperature 0 and 384 tokens, per section of the final notes only
 * (excluded and not-final notes skipped and counted), stored with the minimised text that was sent, then
 * back-translated; resumed after an interruption without asking a section twice; a changed final text translated
 * again; a failed call recorded on its section and asked again; refusals with exit code 2; and the job started from
 * the project's page, with its progress, cancel and resume.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import type { Db } from "../../app/platform/db.server";
import type { UserView } from "../../app/accounts/users.server";
import { getJob, interruptStaleJobs } from "../../app/platform/jobs.server";
import { cancelWorkerJob, killWorkerJob, resumeWorkerJob, workerJobEnded } from "../../app/platform/worker-jobs.server";
import { prepNoteQuality, prepSettlements, prepTranslations } from "../../db/schema";
import { finalSections, projectFinalSections } from "../../app/preparation/final-review.server";
import { getReviewNote, listReviewerNotes, saveMinimisationReview } from "../../app/preparation/review.server";
import type { MinimisationValues } from "../../app/preparation/domain/review";
import { PAPER_TRANSLATION_PROMPT } from "../../app/preparation/domain/translation-prompt";
import {
  startTranslationJob,
  translateProject,
  translationEndpoint,
  translationStatus,
  translationTarget,
} from "../../app/preparation/translation.server";
import { ServiceError } from "../../app/platform/service-error";
import { DEFAULT_RETRY_POLICY } from "../../app/model-calls/retry";
import { silentProgress } from "../../app/model-calls/progress";
import { EVAL_JOBS } from "../../app/protocols.server";
import { freshDb, makeUser } from "../support/db";
import { bodyOf, signedIn } from "../support/route-calls";
import { cli } from "../support/cli-run";
import { startOpenAiStub, type OpenAiStub, type StubCall, type StubHandler } from "../support/openai-stub";
import { SECRET_KEY, setUpEvalJobs, type EvalJobsEnv } from "../support/eval-jobs";

const NOTES = join(new URL("../fixtures/preparation/", import.meta.url).pathname, "notes.csv");
/** SHA-256 of the prompt of *Safe-Psych*'s appendix 8.1 as printed, from "You are" to "{text}". */
const PAPER_PROMPT_SHA256 = "0473624af1259ebe919d36ec144b76e16312bb11e9ce76dacc6f7e3183e0fa68";

let db: Db;
let cleanup: () => void;
let stub: OpenAiStub;
let env: EvalJobsEnv;
let one: UserView;
let logged = "";

/** The section's text of a prompt: what follows "Text:\n". */
const textOf = (call: StubCall) => call.last.slice(call.last.lastIndexOf("Text:\n") + "Text:\n".length);
const isBack = (call: StubCall) =>
  call.last.startsWith("You are a professional medical translator.\nTranslate the following text into Romanian.");

/** Translations are `EN<…>` of the text, back-translations `RO<…>`: which text was sent is visible in what is stored. */
const translator: StubHandler = (call) => ({ content: `${isBack(call) ? "RO" : "EN"}<${textOf(call)}>` });

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  await makeUser(db, "admin", ["admin"]);
  one = await makeUser(db, "one", ["rater"]);
  stub = await startOpenAiStub(translator);
  env = setUpEvalJobs(stub.baseURL);
  expect((await cli(["prep-import", "--project", "P", "--language", "ro", NOTES])).code).toBe(0);
  expect((await cli(["prep-reviewers", "--project", "P", "--add", "one"])).code).toBe(0);
  // ro-1 final (every proposal accepted), ro-2 excluded, ro-3 not reviewed (not final).
  submit("ro-1", acceptAll("ro-1"));
  submit("ro-2", { decisions: {}, missed: [], excluded: true, exclusionReason: "violence" });
  logged = "";
  for (const stream of [process.stdout, process.stderr] as const) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, "write").mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      logged += String(chunk);
      return (write as (c: unknown, ...r: unknown[]) => boolean)(chunk, ...rest);
    });
  }
});
afterEach(async () => {
  vi.restoreAllMocks();
  await stub.close();
  env.restore();
  cleanup();
});

const noteId = (externalId: string) => listReviewerNotes(db, one.id).find((n) => n.externalId === externalId)!.noteId;

function acceptAll(externalId: string, reject?: string): MinimisationValues {
  const view = getReviewNote(db, { userId: one.id, noteId: noteId(externalId) })!;
  const decisions: MinimisationValues["decisions"] = {};
  for (const p of view.note.proposals) decisions[p.id] = { action: p.id === reject ? "reject" : "accept" };
  return { decisions, missed: [], excluded: false, exclusionReason: "" };
}

function submit(externalId: string, values: MinimisationValues) {
  const id = noteId(externalId);
  const version = getReviewNote(db, { userId: one.id, noteId: id })!.version;
  expect(saveMinimisationReview(db, { userId: one.id, noteId: id, values, version, intent: "submit" }).ok).toBe(true);
}

const rowsOf = (externalId: string) =>
  db
    .select()
    .from(prepTranslations)
    .where(eq(prepTranslations.noteId, noteId(externalId)))
    .orderBy(prepTranslations.section)
    .all();

/** The final sections of ro-1 as finalSections gives them. */
const finalTexts = () => (finalSections(db, noteId("ro-1")) as { content: string }[]).map((s) => s.content);

const paperPrompt = (text: string) => PAPER_TRANSLATION_PROMPT.replace("{text}", text);

describe("the final sections of a whole project", () => {
  it("are what finalSections gives note by note: final, excluded, pending, differing and settled", async () => {
    const two = await makeUser(db, "two", ["rater"]);
    expect((await cli(["prep-reviewers", "--project", "P", "--add", "two"])).code).toBe(0);
    const same = () => projectFinalSections(db, projectId()).map((n) => [n.noteId, n.sections]);
    const oneByOne = () => ["ro-1", "ro-2", "ro-3"].map((x) => [noteId(x), finalSections(db, noteId(x))]);
    // A second reviewer named but with no review yet: ro-1 final, ro-2 excluded, ro-3 not reviewed.
    expect(same()).toEqual(oneByOne());
    expect(same().map(([, s]) => (Array.isArray(s) ? "final" : s))).toEqual(["final", null, "not final"]);
    // The second reviewer agrees on ro-2's exclusion and differs on ro-1; ro-1 is then settled.
    const first = getReviewNote(db, { userId: one.id, noteId: noteId("ro-1") })!.note.proposals[0]!.id;
    for (const [x, values] of [
      ["ro-1", acceptAll("ro-1", first)],
      ["ro-2", { decisions: {}, missed: [], excluded: true, exclusionReason: "violent" }],
    ] as [string, MinimisationValues][])
      expect(
        saveMinimisationReview(db, { userId: two.id, noteId: noteId(x), values, version: 0, intent: "submit" }).ok,
      ).toBe(true);
    expect(same()).toEqual(oneByOne());
    expect(same().map(([, s]) => s)).toEqual(["not final", null, "not final"]);
    db.insert(prepSettlements)
      .values({ noteId: noteId("ro-1"), decisions: acceptAll("ro-1", first).decisions, missed: [], settledAt: 1 })
      .run();
    expect(same()).toEqual(oneByOne());
    expect(Array.isArray(same()[0]![1])).toBe(true);
  });
});

describe("prep-translate", () => {
  it("sends the paper's prompt byte for byte, temperature 0, 384 tokens; stores each final section and its back-translation", async () => {
    expect(createHash("sha256").update(PAPER_TRANSLATION_PROMPT).digest("hex")).toBe(PAPER_PROMPT_SHA256);
    const r = await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"]);
    expect(r.err).not.toContain("Error:");
    expect(r.code).toBe(0);
    expect(r.out).toContain("1 final note of 3 (1 excluded, 1 not final: skipped), 4 sections");
    const texts = finalTexts();
    const asked = texts;
    expect(asked.length).toBe(4); // the empty secondary_diagnoses was not imported as a section
    const forward = stub.calls.filter((c) => !isBack(c));
    const back = stub.calls.filter(isBack);
    expect(forward.map((c) => c.last).sort()).toEqual(asked.map(paperPrompt).sort());
    for (const c of stub.calls) {
      expect(c.messages).toHaveLength(1);
      expect(c.messages[0]!.role).toBe("user");
      expect(c.body.temperature).toBe(0);
      expect(c.body.max_tokens).toBe(384);
      expect(c.model).toBe("cand-model");
      expect(c.authorization).toBe(`Bearer ${SECRET_KEY}`);
    }
    // The back-translation: the same prompt, the languages swapped, the stored translation as its text.
    expect(back.map((c) => c.last).sort()).toEqual(
      asked
        .map((t) =>
          PAPER_TRANSLATION_PROMPT.replace("into English.\n", "into Romanian.\n")
            .replace("- Translate ALL Romanian text into English.", "- Translate ALL English text into Romanian.")
            .replace("- Do NOT leave Romanian words.", "- Do NOT leave English words.")
            .replace("{text}", `EN<${t}>`),
        )
        .sort(),
    );
    const rows = rowsOf("ro-1");
    expect(rows.map((x) => x.sourceText)).toEqual(texts);
    for (const row of rows) {
      const empty = row.sourceText.trim() === "";
      expect(row.translation).toBe(empty ? row.sourceText : `EN<${row.sourceText}>`);
      expect(row.backTranslation).toBe(empty ? row.sourceText : `RO<EN<${row.sourceText}>>`);
      expect(row).toMatchObject({ model: "cand-model", backModel: "cand-model", lastError: null, errorCount: 0 });
      expect(row.translatedAt).not.toBeNull();
      expect(row.backTranslatedAt).not.toBeNull();
    }
    // Excluded and not-final notes: nothing asked, nothing stored.
    expect(rowsOf("ro-2")).toEqual([]);
    expect(rowsOf("ro-3")).toEqual([]);
    // No note text in what the command printed or the process logged.
    for (const t of asked) {
      expect(r.out + r.err).not.toContain(t);
      expect(logged).not.toContain(t);
    }
    // The run's audit event: its counts, never a note's text.
    const events = db.$client
      .prepare("SELECT changes FROM events WHERE entity = 'prep_project' AND action = 'translate'")
      .all() as { changes: string }[];
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.changes)).toMatchObject({
      provider: "stub-candidate",
      status: "complete",
      translated: 4,
      backTranslated: 4,
      failed: 0,
      excluded: 1,
      notFinal: 1,
    });
    for (const t of asked) expect(events[0]!.changes).not.toContain(t);
    // Nothing missing: a second run asks nothing.
    const calls = stub.calls.length;
    const again = await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"]);
    expect(again.code).toBe(0);
    expect(stub.calls.length).toBe(calls);
    expect(translationStatus(db, projectId())).toMatchObject({
      finalNotes: 1,
      excluded: 1,
      notFinal: 1,
      sections: 4,
      translated: 4,
      backTranslated: 4,
      failing: 0,
    });
  });

  it("sends --max-tokens as given and a non-Romanian project's language in the prompt's place", async () => {
    const r = await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate", "--max-tokens", "512"]);
    expect(r.code).toBe(0);
    expect(stub.calls.every((c) => c.body.max_tokens === 512)).toBe(true);
    db.$client.prepare("UPDATE prep_projects SET source_language = 'hu'").run();
    expect(translationTarget(db, { id: projectId() }).languageName).toBe("Hungarian");
  });

  it("resumes after an interruption: what was stored stays, only the rest is asked", async () => {
    const interrupt = new AbortController();
    stub.setHandler((call) => {
      if (call.index === 1) interrupt.abort();
      return { ...(translator(call) as { content: string }), delayMs: 50 };
    });
    const target = translationTarget(db, { name: "P" });
    const { endpoint, model } = translationEndpoint("stub-candidate", 10_000);
    const first = await translateProject(
      db,
      {
        projectId: target.projectId,
        languageName: target.languageName,
        endpoint,
        model,
        maxTokens: 384,
        concurrency: 1,
        backTranslateOnly: false,
        retry: DEFAULT_RETRY_POLICY,
      },
      { progress: () => silentProgress, signal: interrupt.signal },
    );
    expect(first.status).toBe("stopped");
    const stored = rowsOf("ro-1").filter((x) => x.translation !== null && x.sourceText.trim() !== "");
    expect(stored.length).toBe(1);
    const before = stub.calls.length;
    stub.setHandler(translator);
    const r = await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"]);
    expect(r.code).toBe(0);
    const resumed = stub.calls.slice(before);
    // The stored section is not translated again; every other one is asked once, then all back-translated.
    expect(resumed.filter((c) => !isBack(c)).map(textOf)).not.toContain(stored[0]!.sourceText);
    expect(resumed.filter((c) => !isBack(c))).toHaveLength(3);
    expect(resumed.filter(isBack)).toHaveLength(4);
    expect(rowsOf("ro-1").every((x) => x.backTranslation !== null)).toBe(true);
    expect(rowsOf("ro-1").find((x) => x.section === stored[0]!.section)!.translatedAt).toBe(stored[0]!.translatedAt);
  });

  it("translates again a section whose final text changed, clearing what belonged to the old text", async () => {
    expect((await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"])).code).toBe(0);
    const old = rowsOf("ro-1");
    const id = noteId("ro-1");
    db.update(prepTranslations)
      .set({ bleu: 50, chrf: 60, correctedText: "corrected" })
      .where(eq(prepTranslations.noteId, id))
      .run();
    db.insert(prepNoteQuality).values({ noteId: id, bleu: 50, chrf: 60, computedAt: 1 }).run();
    // The reviewer revises: the first proposal is rejected, so its section's final text changes.
    const firstProposal = getReviewNote(db, { userId: one.id, noteId: id })!.note.proposals[0]!;
    submit("ro-1", acceptAll("ro-1", firstProposal.id));
    expect(translationStatus(db, projectId()).changed).toBe(1);
    const before = stub.calls.length;
    expect((await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"])).code).toBe(0);
    expect(stub.calls.length - before).toBe(2); // one translation, one back-translation
    const now = rowsOf("ro-1");
    const changed = now.find((x) => x.section === firstProposal.section)!;
    expect(changed.sourceText).toBe(finalTexts()[firstProposal.section]);
    expect(changed.sourceText).not.toBe(old[firstProposal.section]!.sourceText);
    expect(changed).toMatchObject({ bleu: null, chrf: null, correctedText: null });
    expect(changed.translation).toBe(`EN<${changed.sourceText}>`);
    // The other sections keep their scores and corrections; the note's quality summary is gone (it was of the old).
    expect(now.filter((x) => x.section !== firstProposal.section).every((x) => x.correctedText === "corrected")).toBe(
      true,
    );
    expect(db.select().from(prepNoteQuality).all()).toEqual([]);
  });

  it("records a failed call on its section, exits 1, and asks it again on the next run", async () => {
    const texts = finalTexts();
    const hard = texts.find((t) => t.includes("MMSE"))!;
    const section = texts.indexOf(hard);
    stub.setHandler((call) =>
      !isBack(call) && textOf(call) === hard
        ? { status: 400, body: JSON.stringify({ error: { message: hard, type: "invalid_request_error" } }) }
        : translator(call),
    );
    const r = await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("1 failed; 1 missing");
    const failed = rowsOf("ro-1").find((x) => x.section === section)!;
    expect(failed).toMatchObject({ translation: null, errorCount: 1, sourceText: hard });
    expect(failed.lastError).toBe("translation: translation model: HTTP 400 (invalid_request_error)");
    expect(translationStatus(db, projectId())).toMatchObject({ failing: 1, failedCalls: 1, translated: 3 });
    expect(r.out + r.err + logged).not.toContain(hard);
    stub.setHandler(translator);
    const before = stub.calls.length;
    expect((await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"])).code).toBe(0);
    expect(stub.calls.slice(before).map(textOf)).toEqual([hard, `EN<${hard}>`]);
    expect(rowsOf("ro-1").find((x) => x.section === section)).toMatchObject({
      translation: `EN<${hard}>`,
      backTranslation: `RO<EN<${hard}>>`,
      lastError: null,
      errorCount: 1,
    });
  });

  it("counts answers cut at the length limit, and records an empty refusal as the section's failure", async () => {
    const texts = finalTexts();
    const raw = (content: string, finish: string) =>
      JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finish }] });
    stub.setHandler((call) => {
      if (isBack(call)) return translator(call);
      if (textOf(call) === texts[0]) return { raw: raw("EN cut", "length") };
      if (textOf(call) === texts[1]) return { raw: raw("", "content_filter") };
      return translator(call);
    });
    const r = await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("1 answer cut at the length limit");
    const rows = rowsOf("ro-1");
    expect(rows[0]).toMatchObject({ translation: "EN cut", backTranslation: "RO<EN cut>" });
    expect(rows[1]).toMatchObject({
      translation: null,
      lastError: "translation: translation model: refused (no text)",
      errorCount: 1,
    });
  });

  it("--back-translate-only asks only the missing back-translations", async () => {
    stub.setHandler((call) => (isBack(call) ? { status: 400 } : translator(call)));
    expect((await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"])).code).toBe(1);
    expect(rowsOf("ro-1").filter((x) => x.backTranslation === null)).toHaveLength(4);
    stub.setHandler(translator);
    const before = stub.calls.length;
    const r = await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate", "--back-translate-only"]);
    expect(r.code).toBe(0);
    expect(stub.calls.slice(before).every(isBack)).toBe(true);
    expect(stub.calls.length - before).toBe(4);
  });

  it("refuses an unknown project or provider, a bad option and an English project with exit code 2", async () => {
    const noProject = await cli(["prep-translate", "--project", "Nope", "--provider", "stub-candidate"]);
    expect(noProject.code).toBe(2);
    expect(noProject.err).toContain('No preparation project "Nope".');
    const noProvider = await cli(["prep-translate", "--project", "P", "--provider", "nope"]);
    expect(noProvider.code).toBe(2);
    expect(noProvider.err).toContain('No provider "nope" is configured.');
    const bad = await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate", "--concurrency", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--concurrency must be a whole number from 1 to 1024, got "0".');
    for (const r of [noProject, noProvider, bad]) expect(r.err).not.toMatch(/\n\s+at /);
    db.$client.prepare("UPDATE prep_projects SET source_language = 'en'").run();
    const english = await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"]);
    expect(english.code).toBe(2);
    expect(english.err).toContain("there is nothing to translate");
    expect(stub.calls).toEqual([]);
  });
});

const projectId = () => translationTarget(db, { name: "P" }).projectId;

async function until(jobId: number, ok: (j: NonNullable<ReturnType<typeof getJob>>) => boolean, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const j = getJob(db, jobId)!;
    if (ok(j)) return j;
    if (Date.now() > end) throw new Error(`job ${jobId} stayed ${JSON.stringify(j)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The first two translations are answered at once and the others only after 3 s, so that the job is cancelled or
 * killed while exactly two sections are stored, however slowly the machine polls (150 ms a call let a loaded machine
 * finish all four first).
 */
function slowAfterTwo(): StubHandler {
  let translations = 0;
  return (call) => ({
    ...(translator(call) as { content: string }),
    delayMs: !isBack(call) && translations++ >= 2 ? 3000 : 0,
  });
}

describe("the translation job", () => {
  const params = () => ({
    projectId: projectId(),
    project: "P",
    provider: "stub-candidate",
    backTranslateOnly: false,
    maxTokens: 384,
    concurrency: 1,
  });

  it("runs on a worker thread to the end, its progress in sections and calls, its result the project", async () => {
    const jobId = startTranslationJob(db, { params: params(), actorId: null });
    await workerJobEnded(jobId);
    const job = getJob(db, jobId)!;
    expect(job.status).toBe("done");
    expect(job.result).toMatchObject({
      projectId: projectId(),
      translated: 4,
      backTranslated: 4,
      excluded: 1,
      notFinal: 1,
    });
    expect(job.detail).toMatchObject({ step: "back-translations", calls: 8, failures: 0 });
    expect([job.progressDone, job.progressTotal]).toEqual([4, 4]);
    expect(EVAL_JOBS["prep-translate"].results(job.result!)).toEqual({
      href: `/admin/preparation/${projectId()}`,
      label: 'The project "P"',
    });
    expect(rowsOf("ro-1").every((x) => x.backTranslation !== null)).toBe(true);
    const rows = JSON.stringify(db.$client.prepare("SELECT * FROM jobs").all());
    expect(rows).not.toContain(SECRET_KEY);
    for (const t of finalTexts().filter((x) => x.trim() !== "")) expect(rows).not.toContain(t);
  });

  it("is cancelled keeping what finished, and resumed without asking a stored section again", async () => {
    stub.setHandler(slowAfterTwo());
    const jobId = startTranslationJob(db, { params: params(), actorId: null });
    await until(jobId, (j) => j.progressDone >= 2);
    await cancelWorkerJob(db, { jobId, actorId: null });
    expect(getJob(db, jobId)!.status).toBe("cancelled");
    const kept = rowsOf("ro-1").filter((x) => x.translation !== null);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.length).toBeLessThan(4);
    const asked = stub.calls.length;
    stub.setHandler(translator);
    const resumed = resumeWorkerJob(db, { jobId, actorId: null });
    await workerJobEnded(resumed);
    expect(getJob(db, resumed)!.status).toBe("done");
    // What the cancelled job stored is not asked again (a call in flight at the cancel is: its answer was dropped).
    const again = stub.calls
      .slice(asked)
      .filter((c) => !isBack(c))
      .map(textOf);
    for (const k of kept) expect(again).not.toContain(k.sourceText);
    expect(again).toHaveLength(4 - kept.length);
    expect(rowsOf("ro-1").every((x) => x.backTranslation !== null)).toBe(true);
  });

  it("loses nothing stored when its worker is killed mid-run, and is resumed after the restart", async () => {
    stub.setHandler(slowAfterTwo());
    const jobId = startTranslationJob(db, { params: params(), actorId: null });
    await until(jobId, (j) => j.progressDone >= 2);
    await killWorkerJob(jobId);
    const kept = rowsOf("ro-1").filter((x) => x.translation !== null);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    // The server's next start marks the job stopped; it is resumed from there.
    expect(interruptStaleJobs(db)).toBe(1);
    const asked = stub.calls.length;
    stub.setHandler(translator);
    const resumed = resumeWorkerJob(db, { jobId, actorId: null });
    await workerJobEnded(resumed);
    expect(getJob(db, resumed)!.status).toBe("done");
    for (const k of kept) {
      expect(
        stub.calls
          .slice(asked)
          .filter((c) => !isBack(c))
          .map(textOf),
      ).not.toContain(k.sourceText);
      expect(rowsOf("ro-1").find((x) => x.section === k.section)!.translatedAt).toBe(k.translatedAt);
    }
    expect(rowsOf("ro-1").every((x) => x.backTranslation !== null)).toBe(true);
  });

  it("is refused for an unknown project or provider", () => {
    expect(() => startTranslationJob(db, { params: { ...params(), projectId: 999 }, actorId: null })).toThrow(
      ServiceError,
    );
    expect(() => startTranslationJob(db, { params: { ...params(), provider: "nope" }, actorId: null })).toThrow(
      'No provider "nope" is configured.',
    );
  });
});

describe("the project's page", () => {
  it("shows where the translation stands and its failing sections, starts a job and links to it; refuses a reviewer", async () => {
    const texts = finalTexts();
    stub.setHandler((call) => (!isBack(call) && textOf(call) === texts[0] ? { status: 400 } : translator(call)));
    expect((await cli(["prep-translate", "--project", "P", "--provider", "stub-candidate"])).code).toBe(1);
    const admin = await signedIn(db, "admin");
    const cookie = admin.post("/", {}).headers.get("Cookie")!;
    const page = await import("../../app/routes/admin.preparation.$projectId");
    const path = `/admin/preparation/${projectId()}`;
    const view = await page.loader({
      request: new Request(`http://concord.test${path}`, { headers: { Cookie: cookie } }),
      params: { projectId: String(projectId()) },
      context: {},
    });
    expect(view.translation.status).toMatchObject({ sections: 4, translated: 3, backTranslated: 3, failing: 1 });
    expect(view.translation.failures).toEqual([
      { note: "ro-1", section: 0, reason: "translation: translation model: HTTP 400 (stub_error)", errors: 1 },
    ]);
    expect(view.translation.providers.map((p) => p.name)).toContain("stub-candidate");
    const shown = JSON.stringify(view.translation);
    expect(shown).not.toContain(SECRET_KEY);
    for (const t of texts) expect(shown).not.toContain(t);

    stub.setHandler(translator);
    const out = await page.action({
      request: admin.post(path, {
        intent: "translate",
        provider: "stub-candidate",
        maxTokens: "384",
        concurrency: "2",
      }),
      params: { projectId: String(projectId()) },
      context: {},
    });
    expect(out).toBeInstanceOf(Response);
    const location = (out as Response).headers.get("Location")!;
    expect(location).toMatch(/^\/admin\/eval-jobs\/\d+$/);
    const jobId = Number(location.split("/").pop());
    await workerJobEnded(jobId);
    expect(getJob(db, jobId)).toMatchObject({
      kind: "prep-translate",
      status: "done",
      params: {
        projectId: projectId(),
        provider: "stub-candidate",
        maxTokens: 384,
        concurrency: 2,
        backTranslateOnly: false,
      },
    });
    expect(translationStatus(db, projectId())).toMatchObject({ translated: 4, backTranslated: 4, failing: 0 });

    const bad = await page.action({
      request: admin.post(path, { intent: "translate", provider: "nope", maxTokens: "384", concurrency: "2" }),
      params: { projectId: String(projectId()) },
      context: {},
    });
    expect((await bodyOf(bad)).body).toEqual({ ok: false, message: 'No provider "nope" is configured.' });
    const zero = await page.action({
      request: admin.post(path, { intent: "translate", provider: "stub-candidate", maxTokens: "0", concurrency: "2" }),
      params: { projectId: String(projectId()) },
      context: {},
    });
    expect((await bodyOf(zero)).body).toEqual({ ok: false, message: "The longest answer is at least 1 token." });

    const reviewer = await signedIn(db, "one");
    await expect(
      page.action({
        request: reviewer.post(path, {
          intent: "translate",
          provider: "stub-candidate",
          maxTokens: "384",
          concurrency: "2",
        }),
        params: { projectId: String(projectId()) },
        context: {},
      }),
    ).rejects.toMatchObject({ status: 403 });
  });
});
