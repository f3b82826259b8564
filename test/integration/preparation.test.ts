/**
 * Preparation projects (docs/preparation.md): the import through the command line (all or nothing, FILE:LINE
 * refusals), who sees source text (docs/security.md, "Source text": admins and the named reviewers; anyone else 404,
 * an annotator included), and the minimisation review on the work-item engine (drafts, versions, submission rules,
 * audit without the note's words).
 */
import { readFileSync, truncateSync, writeFileSync } from "node:fs";
import { IMPORT_LIMITS } from "../../app/formats/import-contract";
import { dirname, join } from "node:path";
import { sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../app/cli/index";
import type { CliIO } from "../../app/cli/command";
import type { Db } from "../../app/platform/db.server";
import type { UserView } from "../../app/accounts/users.server";
import { findProjectByName, listProjectNotes, projectAgreement } from "../../app/preparation/projects.server";
import { getReviewNote, listReviewerNotes, saveMinimisationReview } from "../../app/preparation/review.server";
import { minimisedSections } from "../../app/preparation/domain/review";
import * as workspace from "../../app/routes/preparation.$noteId";
import * as list from "../../app/routes/preparation._index";
import * as adminList from "../../app/routes/admin.preparation._index";
import * as adminProject from "../../app/routes/admin.preparation.$projectId";
import { freshDb, makeUser } from "../support/db";
import { bodyOf, signedIn } from "../support/route-calls";

const FIXTURES = new URL("../fixtures/preparation/", import.meta.url).pathname;
const NOTES = join(FIXTURES, "notes.csv");

let db: Db;
let dir: string;
let cleanup: () => void;
let reviewer: UserView;

beforeEach(async () => {
  let path: string;
  ({ db, path, cleanup } = freshDb());
  dir = dirname(path);
  await makeUser(db, "admin", ["admin"]);
  reviewer = await makeUser(db, "rev", ["rater"]);
  await makeUser(db, "other", ["rater"]);
  await makeUser(db, "ann", ["annotator"]);
});
afterEach(() => cleanup());

async function run(argv: string[]) {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += t), err: (t) => (err += t), readStdin: async () => "", isTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

const count = (table: string) => db.get<{ n: number }>(sql.raw(`select count(*) as n from ${table}`)).n;

async function importProject() {
  const r = await run(["prep-import", "--project", "Sibiu 2026", "--language", "ro", NOTES]);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  const project = findProjectByName(db, "Sibiu 2026")!;
  expect((await run(["prep-reviewers", "--project", "Sibiu 2026", "--add", "rev"])).code).toBe(0);
  return project;
}

const noteOf = (externalId: string) =>
  listReviewerNotes(db, reviewer.id).find((n) => n.externalId === externalId)!.noteId;

describe("prep-import", () => {
  it("creates the project with its notes and the detectors' proposals", async () => {
    const r = await run(["prep-import", "--project", "Sibiu 2026", "--language", "ro", NOTES]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Created preparation project "Sibiu 2026" \(ro\): 3 notes, \d+ proposals\./);
    const project = findProjectByName(db, "Sibiu 2026")!;
    expect(project.sourceLanguage).toBe("ro");
    const notes = listProjectNotes(db, project.id);
    expect(notes.map((n) => n.externalId)).toEqual(["ro-1", "ro-2", "ro-3"]);
    expect(notes.every((n) => n.proposals > 0)).toBe(true);
    // Kept apart from the annotation studies.
    expect(count("cases")).toBe(0);
    expect(count("studies")).toBe(0);
  });

  it("refuses a bad file with FILE:LINE, exit 2, and writes nothing", async () => {
    const bad = join(FIXTURES, "bad-duplicate.csv");
    const r = await run(["prep-import", "--project", "P", "--language", "ro", bad]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${bad}:3: `);
    expect(r.err).toContain("nothing was imported");
    expect(count("prep_projects") + count("prep_notes")).toBe(0);
  });

  it("refuses bytes that are not UTF-8 by their line, before a row is read", async () => {
    const file = join(dir, "latin1.csv");
    writeFileSync(
      file,
      Buffer.concat([
        Buffer.from("id,age_group,sex,presenting_symptoms,psychiatric_history,psychiatric_exam\nx,18-27,F,a,b,"),
        Buffer.from([0xe9, 0x0a]),
      ]),
    );
    const r = await run(["prep-import", "--project", "P", "--language", "ro", file]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`${file}:2: .*UTF-8`));
    expect(count("prep_projects")).toBe(0);
  });

  it("refuses a file over the preparation limit from its size, without reading it", async () => {
    const big = join(dir, "big.csv");
    writeFileSync(big, "");
    truncateSync(big, IMPORT_LIMITS.preparation.maxFileBytes + 1);
    const t0 = performance.now();
    const r = await run(["prep-import", "--project", "Big", "--language", "ro", big]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${big}: the file is`);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(count("prep_projects")).toBe(0);
  });

  it("refuses a missing language, an existing project, a bad score table and a bad name pattern", async () => {
    expect((await run(["prep-import", "--project", "P", "--language", "Romanian", NOTES])).err).toMatch(/language tag/);
    await importProject();
    const again = await run(["prep-import", "--project", "Sibiu 2026", "--language", "ro", NOTES]);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/exists already/);
    const table = join(dir, "scores.csv");
    writeFileSync(table, "test,aliases,from,to\nMMSE,,0,20\nMMSE,,15,30\n");
    const t = await run(["prep-import", "--project", "Q", "--language", "ro", "--score-table", table, NOTES]);
    expect(t.code).toBe(2);
    expect(t.err).toContain(`${table}:3: (MMSE) the range 15-30 overlaps 0-20.`);
    const patterns = join(dir, "patterns.txt");
    writeFileSync(patterns, "(unclosed\n");
    const p = await run(["prep-import", "--project", "Q", "--language", "ro", "--name-patterns", patterns, NOTES]);
    expect(p.code).toBe(2);
    expect(p.err).toMatch(/not a regular expression/);
    expect(count("prep_projects")).toBe(1);
  });

  it("uses the project's lists and score table", async () => {
    const places = join(dir, "places.txt");
    writeFileSync(places, "# cities\nSibiu\n");
    const table = join(dir, "scores.csv");
    writeFileSync(table, "test,aliases,from,to\nMMSE,,0,25\nMMSE,,26,30\n");
    const r = await run([
      "prep-import",
      "--project",
      "Lists",
      "--language",
      "ro",
      "--places",
      places,
      "--score-table",
      table,
      NOTES,
    ]);
    expect(r.code).toBe(0);
    await run(["prep-reviewers", "--project", "Lists", "--add", "rev"]);
    const view = getReviewNote(db, { userId: reviewer.id, noteId: noteOf("ro-1") })!;
    const shown = view.note.proposals.map((p) => [
      p.category,
      view.note.sections[p.section]!.content.slice(p.start, p.end),
      p.replacement,
    ]);
    expect(shown).toContainEqual(["place", "Sibiu", ""]);
    expect(shown).toContainEqual(["test_score", "28/30", "26-30"]);
    expect(shown).toContainEqual(["age", "52", "48-57"]);
  });
});

describe("the admin's import page", () => {
  /** A multipart post of the page's form, with the session's CSRF token. */
  async function upload(name: string, file: File) {
    const { user, post } = await signedIn(db, "admin");
    const body = new FormData();
    body.set("csrf", user.csrf);
    body.set("name", name);
    body.set("language", "ro");
    body.set("places", "Sibiu\n");
    body.set("file", file);
    const request = new Request("http://concord.test/admin/preparation", {
      method: "POST",
      headers: { Cookie: post("/", {}).headers.get("Cookie")! },
      body,
    });
    return adminList.action({ request, params: {}, context: {} }).then(
      (answer) => answer,
      (thrown: Response) => thrown,
    );
  }

  it("refuses a bad upload by FILE:LINE and writes nothing; a good one creates the project", async () => {
    const bad = await upload("P", new File([readFileSync(join(FIXTURES, "bad-duplicate.csv"))], "bad.csv"));
    expect(bad).toMatchObject({ message: "1 problem(s); nothing was imported." });
    expect((bad as { issues: string[] }).issues[0]).toMatch(/^bad\.csv:3: \(id ok-1\) duplicate id/);
    const latin1 = await upload("P", new File([Buffer.from([0x69, 0x64, 0x0a, 0xe9, 0x0a])], "latin1.csv"));
    expect((latin1 as { issues: string[] }).issues[0]).toMatch(/^latin1\.csv:2: .*UTF-8/);
    expect(count("prep_projects") + count("prep_notes")).toBe(0);
    const good = await upload("Uploaded", new File([readFileSync(NOTES)], "notes.csv"));
    expect((good as Response).status).toBe(302);
    const project = findProjectByName(db, "Uploaded")!;
    expect(project.settings.places).toEqual(["Sibiu"]);
    expect(listProjectNotes(db, project.id)).toHaveLength(3);
  });
});

describe("who sees source text", () => {
  it("answers 404 to a user the project does not name, an annotator and an admin alike, for the note and its save", async () => {
    await importProject();
    const noteId = noteOf("ro-1");
    for (const username of ["other", "ann", "admin"]) {
      const { post } = await signedIn(db, username);
      const get = new Request(`http://concord.test/preparation/${noteId}`, {
        headers: { Cookie: post("/", {}).headers.get("Cookie")! },
      });
      const refused = await workspace.loader({ request: get, params: { noteId: String(noteId) }, context: {} }).then(
        () => null,
        (e: Response) => e,
      );
      expect(refused?.status, username).toBe(404);
      const save = await bodyOf(
        await workspace.action({
          request: post(`/preparation/${noteId}`, {
            values: JSON.stringify({ decisions: {}, missed: [], excluded: true, exclusionReason: "x" }),
            version: "0",
            intent: "submit",
          }),
          params: { noteId: String(noteId) },
          context: {},
        }),
      );
      expect(save.status, username).toBe(404);
      // Their list names no note of the project.
      const listed = await list.loader({ request: get, params: {}, context: {} });
      expect(listed.rows, username).toEqual([]);
    }
    expect(count("prep_reviews")).toBe(0);
  });

  it("shows the note to the named reviewer, and the admin pages only to admins", async () => {
    const project = await importProject();
    const noteId = noteOf("ro-1");
    const { post } = await signedIn(db, "rev");
    const cookie = post("/", {}).headers.get("Cookie")!;
    const view = await workspace.loader({
      request: new Request(`http://concord.test/preparation/${noteId}`, { headers: { Cookie: cookie } }),
      params: { noteId: String(noteId) },
      context: {},
    });
    expect(view.note.sections[0]!.content).toContain("Sibiu");
    for (const call of [
      () =>
        adminList.loader({
          request: new Request("http://concord.test/admin/preparation", { headers: { Cookie: cookie } }),
          params: {},
          context: {},
        }),
      () =>
        adminProject.loader({
          request: new Request(`http://concord.test/admin/preparation/${project.id}`, { headers: { Cookie: cookie } }),
          params: { projectId: String(project.id) },
          context: {},
        }),
    ]) {
      const refused = await call().then(
        () => null,
        (e: Response) => e,
      );
      expect(refused?.status).toBe(403);
    }
  });

  it("takes a reviewer off: their notes answer 404 from then on, their review stays", async () => {
    await importProject();
    const noteId = noteOf("ro-2");
    const saved = saveMinimisationReview(db, {
      userId: reviewer.id,
      noteId,
      values: { decisions: {}, missed: [], excluded: true, exclusionReason: "violence" },
      version: 0,
      intent: "submit",
    });
    expect(saved.ok).toBe(true);
    expect((await run(["prep-reviewers", "--project", "Sibiu 2026", "--remove", "rev"])).out).toContain("Removed: rev");
    expect(getReviewNote(db, { userId: reviewer.id, noteId })).toBeNull();
    expect(count("prep_reviews")).toBe(1);
  });
});

describe("the minimisation review", () => {
  it("saves drafts and a submission with versions, refuses a stale one, and audits no words of the note", async () => {
    await importProject();
    const noteId = noteOf("ro-1");
    const view = getReviewNote(db, { userId: reviewer.id, noteId })!;
    const [first] = view.note.proposals;
    const draft = saveMinimisationReview(db, {
      userId: reviewer.id,
      noteId,
      values: { decisions: { [first!.id]: { action: "accept" } }, missed: [], excluded: false, exclusionReason: "" },
      version: 0,
      intent: "draft",
    });
    expect(draft).toMatchObject({ ok: true, version: 1, state: "draft" });
    // Not every proposal decided: refused with a field error per undecided proposal.
    const incomplete = saveMinimisationReview(db, {
      userId: reviewer.id,
      noteId,
      values: { decisions: { [first!.id]: { action: "accept" } }, missed: [], excluded: false, exclusionReason: "" },
      version: 1,
      intent: "submit",
    });
    expect(incomplete).toMatchObject({ ok: false, status: 422 });
    const text = view.note.sections[1]!.content;
    // The date edited, the name rejected, every other proposal accepted.
    const decisions = Object.fromEntries(
      view.note.proposals.map((p) => [
        p.id,
        p.category === "date_time"
          ? { action: "edit" as const, text: "CONFIDENTIAL-EDIT" }
          : p.category === "name"
            ? { action: "reject" as const }
            : { action: "accept" as const },
      ]),
    );
    const values = {
      decisions,
      missed: [
        {
          section: 1,
          start: text.indexOf("depresie"),
          end: text.indexOf("depresie") + 8,
          category: "physical" as const,
          replacement: "SECRET-MARK",
        },
      ],
      excluded: false,
      exclusionReason: "",
    };
    // A stale version is refused and writes nothing.
    expect(
      saveMinimisationReview(db, { userId: reviewer.id, noteId, values, version: 0, intent: "submit" }),
    ).toMatchObject({ ok: false, status: 409 });
    const done = saveMinimisationReview(db, { userId: reviewer.id, noteId, values, version: 1, intent: "submit" });
    expect(done).toMatchObject({ ok: true, version: 2, state: "submitted" });
    const after = getReviewNote(db, { userId: reviewer.id, noteId })!;
    expect(after.state).toBe("submitted");
    // Accepted: the family reference generalised; the mark applied; the rejected name kept.
    const minimised = minimisedSections(after.note, after.values)!;
    expect(minimised[1]!.content).toBe("ruda are SECRET-MARK. Tratată de dr. Ionescu.");
    expect(minimised[0]!.content).toBe(
      "Pacientă în vârstă de 48-57 de ani, din Sibiu, internată la data de CONFIDENTIAL-EDIT pentru insomnie.",
    );
    const events = db.all<{ action: string; changes: string }>(
      sql`select action, changes from visible_events where entity = 'prep_review' order by id`,
    );
    expect(events.map((e) => e.action)).toEqual(["draft", "submit"]);
    const logged = events.map((e) => e.changes).join("\n");
    expect(logged).toContain('"accept"');
    for (const words of ["CONFIDENTIAL-EDIT", "SECRET-MARK", "Mama", "Sibiu", "Ionescu"])
      expect(logged).not.toContain(words);
  });

  it("excludes a case with a reason, and refuses an exclusion without one", async () => {
    await importProject();
    const noteId = noteOf("ro-3");
    const base = { decisions: {}, missed: [], excluded: true };
    expect(
      saveMinimisationReview(db, {
        userId: reviewer.id,
        noteId,
        values: { ...base, exclusionReason: " " },
        version: 0,
        intent: "submit",
      }),
    ).toMatchObject({ ok: false, status: 422, errors: { exclusionReason: "Say why the case is excluded." } });
    expect(
      saveMinimisationReview(db, {
        userId: reviewer.id,
        noteId,
        values: { ...base, exclusionReason: "rare presentation" },
        version: 0,
        intent: "submit",
      }),
    ).toMatchObject({ ok: true, state: "submitted" });
    const project = findProjectByName(db, "Sibiu 2026")!;
    expect(listProjectNotes(db, project.id).find((n) => n.externalId === "ro-3")).toMatchObject({
      submitted: 1,
      excluded: 1,
    });
    // A second reviewer reviews the same note on their own: the page's agreement counts the exclusion decisions.
    await run(["prep-reviewers", "--project", "Sibiu 2026", "--add", "other"]);
    const other = listReviewerNotes(db, reviewer.id).length ? (await signedIn(db, "other")).user : null;
    const view = getReviewNote(db, { userId: other!.id, noteId })!;
    expect(view.state).toBe("not_started");
    const decisions = Object.fromEntries(view.note.proposals.map((p) => [p.id, { action: "accept" as const }]));
    expect(
      saveMinimisationReview(db, {
        userId: other!.id,
        noteId,
        values: { decisions, missed: [], excluded: false, exclusionReason: "" },
        version: 0,
        intent: "submit",
      }),
    ).toMatchObject({ ok: true });
    expect(projectAgreement(db, project.id)).toMatchObject({ reviewers: 2, notesReviewedTwice: 1, exclusionAgreed: 0 });
  });
});
