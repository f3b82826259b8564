/**
 * A text over its limit (app/work-items/domain/text-limits.ts) is refused at its field: the action answers 422 with
 * the field's error and saves nothing, whether the text is just over its own limit or so long that the whole post
 * is over the route's size, which used to be reported as a malformed form.
 */
import { eq } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { annotations } from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { requireUser } from "../../app/accounts/guard.server";
import { action as annotateAction } from "../../app/routes/annotate.$caseId";
import { login, type UserView } from "../../app/accounts/users.server";
import { parseDraftPost } from "../../app/platform/forms";
import { TEXT_LIMITS } from "../../app/work-items/domain/text-limits";
import { freshDb, makeUser, TEST_PASSWORD } from "../support/db";
import { studyForPair, sufficient, insufficient } from "../support/labels";

const BASE = "http://concord.test";
let db: Db;
let cleanup: () => void;
let alice: UserView;
let caseIds: number[];

beforeEach(async () => {
  ({ db, cleanup } = freshDb());
  const [a, b] = await Promise.all([makeUser(db, "alice", ["annotator"]), makeUser(db, "bruno", ["annotator"])]);
  alice = a;
  caseIds = studyForPair(db, { name: "Limits", cases: 2, annotatorIds: [a.id, b.id] }).caseIds;
});
afterEach(() => cleanup());

async function postAs(username: string, path: string, fields: Record<string, string>) {
  const r = await login(db, { username, password: TEST_PASSWORD, ip: "192.0.2.1" });
  if (!r.ok) throw new Error(r.error);
  const cookie = r.sessionCookie.split(";")[0]!;
  const user = await requireUser(new Request(`${BASE}/`, { headers: { Cookie: cookie } }));
  return new Request(BASE + path, {
    method: "POST",
    headers: { Cookie: cookie },
    body: new URLSearchParams({ csrf: user.csrf, ...fields }),
  });
}

async function annotate(caseId: number, intent: "draft" | "submit", values: object) {
  const request = await postAs("alice", `/annotate/${caseId}`, {
    intent,
    version: "0",
    values: JSON.stringify(values),
  });
  const out = (await annotateAction({ request, params: { caseId: String(caseId) }, context: {} } as never)) as {
    data: { ok: boolean; message: string; errors?: Record<string, string> };
    init: { status: number } | null;
  };
  return { status: out.init?.status ?? 200, body: out.data };
}

const savedRows = (caseId: number) =>
  db
    .select()
    .from(annotations)
    .where(eq(annotations.caseId, caseId))
    .all()
    .filter((r) => r.annotatorId === alice.id);

describe("annotation notes over their limit", () => {
  it("a draft one character over answers 422 with the error at the notes and saves nothing", async () => {
    const { status, body } = await annotate(
      caseIds[0]!,
      "draft",
      sufficient("F32.1", 2, "x".repeat(TEXT_LIMITS.notes + 1)),
    );
    expect(status).toBe(422);
    expect(body.ok).toBe(false);
    expect(body.errors?.notes).toBe("Notes have at most 10,000 characters.");
    expect(savedRows(caseIds[0]!)).toEqual([]);
  });

  it("notes longer than the whole post may be are still reported at the notes, not as a malformed form", async () => {
    const { status, body } = await annotate(caseIds[0]!, "submit", sufficient("F32.1", 2, "y".repeat(150_000)));
    expect(status).toBe(422);
    expect(body.message).not.toMatch(/malformed/i);
    expect(body.errors?.notes).toMatch(/at most 10,000 characters/);
    expect(savedRows(caseIds[0]!)).toEqual([]);
  });

  it("other missing information over its limit is marked at its field", async () => {
    const { status, body } = await annotate(
      caseIds[1]!,
      "submit",
      insufficient(["other"], "z".repeat(TEXT_LIMITS.missingOther + 1)),
    );
    expect(status).toBe(422);
    expect(body.errors?.missingOther).toBe("Other missing information has at most 2,000 characters.");
    expect(savedRows(caseIds[1]!)).toEqual([]);
  });

  it("notes at the limit are saved", async () => {
    const { status } = await annotate(caseIds[0]!, "draft", sufficient("F32.1", 2, "x".repeat(TEXT_LIMITS.notes)));
    expect(status).toBe(200);
    expect(savedRows(caseIds[0]!)[0]!.notes).toHaveLength(TEXT_LIMITS.notes);
  });
});

describe("parseDraftPost", () => {
  const Schema = z.object({ comment: z.string().max(5, "Too long.") });
  const form = (values: string) => {
    const f = new FormData();
    f.set("intent", "draft");
    f.set("version", "0");
    f.set("values", values);
    return f;
  };

  it("marks the field in the message-only report too", () => {
    const r = parseDraftPost(form(JSON.stringify({ comment: "123456" })), Schema, {
      id: "1",
      maxLength: 100,
      report: "message",
    });
    expect(r).toEqual({
      ok: false,
      failure: { ok: false, status: 422, message: "Too long.", errors: { comment: "Too long." } },
    });
  });

  it("refuses a post over its size whose fields are each within their limits, without marking a field", () => {
    const r = parseDraftPost(form(JSON.stringify({ comment: "12345", pad: "x".repeat(200) })), Schema, {
      id: "1",
      maxLength: 100,
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.errors).toEqual({});
  });

  it("refuses a post far over its size before reading it", () => {
    const r = parseDraftPost(form("x".repeat(100 * 21)), Schema, { id: "1", maxLength: 100 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.message).toMatch(/too long/i);
  });
});
