/**
 * The save-state machine of the workspaces (app/work-items/domain/save-state.ts; docs/architecture.md, "The
 * save-state machine"): every transition, event by event, with the effects it asks the hook to perform.
 */
import { describe, expect, it } from "vitest";
import {
  AUTOSAVE_DELAY_MS,
  CONFLICT_MESSAGE,
  initialSaveState,
  LEAVE_REVISION_QUESTION,
  LEAVE_UNSAVED_QUESTION,
  NOT_MOVED_MESSAGE,
  pendingWork,
  retryDelay,
  saveStateText,
  saveTransition,
  submitting,
  type DraftResult,
  type SaveEvent,
  type SaveMachine,
  type SaveMode,
} from "~/work-items/domain/save-state";

interface V {
  notes: string;
  label: string;
}
const START: V = { notes: "", label: "" };

function fresh(mode: SaveMode = "draft", updatedAt: number | null = null, version = 0): SaveMachine<V> {
  return initialSaveState({ values: START, version, updatedAt, mode });
}
/** Runs events in order; returns the last step. */
function run(s: SaveMachine<V>, ...events: SaveEvent<V>[]) {
  let step = { state: s, effects: [] as ReturnType<typeof saveTransition<V>>["effects"] };
  for (const e of events) step = saveTransition(step.state, e);
  return step;
}
const change = (patch: Partial<V>, base: V = START): SaveEvent<V> => ({
  type: "change",
  values: { ...base, ...patch },
  fields: Object.keys(patch),
});
const ok = (version: number, savedAt = 1000): DraftResult => ({ ok: true, version, savedAt, state: "draft" });
const bad = (
  status: number,
  message = "no",
  extra: Partial<Extract<DraftResult, { ok: false }>> = {},
): DraftResult => ({
  ok: false,
  status,
  message,
  ...extra,
});
const draftAnswer = (result: DraftResult): SaveEvent<V> => ({ type: "answer", intent: "draft", result });
const submitAnswer = (result: DraftResult): SaveEvent<V> => ({ type: "answer", intent: "submit", result });
const submit = (problems: Record<string, string> = {}): SaveEvent<V> => ({
  type: "submit",
  problems,
  incompleteMessage: "Incomplete.",
});
/** A draft page with one change sent and in flight. */
function sending(): SaveMachine<V> {
  return run(fresh(), change({ notes: "a" }), { type: "timer" }).state;
}

describe("initial state", () => {
  it("is idle before anything is saved, saved when the page read a saved item", () => {
    expect(fresh().status).toBe("idle");
    expect(fresh("draft", 5).status).toBe("saved");
    expect(fresh("draft", 5).savedAt).toBe(5);
    expect(pendingWork(fresh())).toBe(false);
  });
});

describe("change", () => {
  it("idle → unsaved, waits the autosave delay, clears the changed field's error", () => {
    const s = { ...fresh(), errors: { notes: "too long", label: "missing" } };
    const { state, effects } = saveTransition(s, change({ notes: "x" }));
    expect(state.status).toBe("unsaved");
    expect(state.dirty).toBe(true);
    expect(state.values.notes).toBe("x");
    expect(state.errors).toEqual({ label: "missing" });
    expect(effects).toEqual([{ type: "wait", ms: AUTOSAVE_DELAY_MS }]);
    expect(pendingWork(state)).toBe(true);
  });
  it("saved → unsaved and refused → unsaved (saving resumes)", () => {
    expect(run(fresh("draft", 5), change({ notes: "x" })).state.status).toBe("unsaved");
    const refused = { ...fresh(), status: "refused" as const };
    const step = saveTransition(refused, change({ notes: "x" }));
    expect(step.state.status).toBe("unsaved");
    expect(step.effects).toEqual([{ type: "wait", ms: AUTOSAVE_DELAY_MS }]);
  });
  it("while saving: stays saving and sets no timer (the answer decides)", () => {
    const step = saveTransition(sending(), change({ notes: "ab" }));
    expect(step.state.status).toBe("saving");
    expect(step.state.dirty).toBe(true);
    expect(step.effects).toEqual([]);
  });
  it("while retrying or in conflict: the status stays, no new timer", () => {
    for (const status of ["retrying", "conflict"] as const) {
      const step = saveTransition({ ...fresh(), status }, change({ notes: "x" }));
      expect(step.state.status).toBe(status);
      expect(step.effects).toEqual([]);
    }
  });
  it("submitted work → revising, never autosaved; a conflict outranks revising", () => {
    const step = saveTransition(fresh("revision", 5), change({ notes: "x" }));
    expect(step.state.status).toBe("revising");
    expect(step.effects).toEqual([]);
    expect(saveStateText(step.state)).toMatch(/^Revising/);
    expect(run({ ...fresh("revision", 5), status: "conflict" }, change({ notes: "x" })).state.status).toBe("conflict");
  });
  it("read-only work ignores changes", () => {
    const s = fresh("readOnly");
    expect(saveTransition(s, change({ notes: "x" }))).toEqual({ state: s, effects: [] });
  });
});

describe("timer", () => {
  it("unsaved → saving: sends the values at the version held", () => {
    const s = run(fresh("draft", null, 3), change({ notes: "a" })).state;
    const { state, effects } = saveTransition(s, { type: "timer" });
    expect(state.status).toBe("saving");
    expect(state.inFlight).toBe("draft");
    expect(state.dirty).toBe(false);
    expect(effects).toContainEqual({ type: "send", intent: "draft", values: { notes: "a", label: "" }, version: 3 });
  });
  it("does nothing with nothing to send, a save in flight, a conflict, or outside drafts", () => {
    expect(saveTransition(fresh(), { type: "timer" }).effects).toEqual([]);
    expect(saveTransition({ ...sending(), dirty: true }, { type: "timer" }).effects).toEqual([]);
    expect(saveTransition({ ...fresh(), dirty: true, status: "conflict" }, { type: "timer" }).effects).toEqual([]);
    expect(saveTransition({ ...fresh("revision"), dirty: true }, { type: "timer" }).effects).toEqual([]);
  });
  it("retrying → saving: the retry sends the same values again", () => {
    const retrying = run(sending(), draftAnswer(bad(503))).state;
    const step = saveTransition(retrying, { type: "timer" });
    expect(step.state.status).toBe("saving");
    expect(step.effects).toContainEqual({
      type: "send",
      intent: "draft",
      values: { notes: "a", label: "" },
      version: 0,
    });
  });
});

describe("draft answer", () => {
  it("saving → saved: takes the new version and time, the sent values become the saved ones", () => {
    const { state, effects } = saveTransition(sending(), draftAnswer(ok(1, 4242)));
    expect(state).toMatchObject({ status: "saved", version: 1, savedAt: 4242, inFlight: null, draftSaved: true });
    expect(state.saved).toEqual({ notes: "a", label: "" });
    expect(effects).toEqual([]);
    expect(saveStateText(state)).toMatch(/^Saved /);
    expect(pendingWork(state)).toBe(false);
  });
  it("saving → unsaved when the user typed meanwhile, and the next autosave is scheduled", () => {
    const typed = run(sending(), change({ notes: "ab" }, { notes: "a", label: "" })).state;
    const { state, effects } = saveTransition(typed, draftAnswer(ok(1)));
    expect(state.status).toBe("unsaved");
    expect(state.saved.notes).toBe("a");
    expect(effects).toEqual([{ type: "wait", ms: AUTOSAVE_DELAY_MS }]);
  });
  it("saving → conflict on 409: the values stay, nothing more is sent", () => {
    const { state, effects } = saveTransition(sending(), draftAnswer(bad(409, "changed elsewhere")));
    expect(state).toMatchObject({ status: "conflict", problem: "changed elsewhere", dirty: true });
    expect(state.values.notes).toBe("a");
    expect(effects).toEqual([]);
    expect(saveStateText(state)).toBe("Conflict: not saved");
    expect(pendingWork(state)).toBe(true);
  });
  it("saving → retrying on 503, 507, 500 and no answer (0), backing off, at least Retry-After", () => {
    for (const status of [0, 500, 503, 507]) {
      const { state, effects } = saveTransition(sending(), draftAnswer(bad(status, "busy")));
      expect(state).toMatchObject({ status: "retrying", attempt: 1, problem: "busy", dirty: true });
      expect(effects).toEqual([{ type: "wait", ms: 1000 }]);
    }
    const withRetryAfter = saveTransition(sending(), draftAnswer(bad(503, "busy", { retryAfter: 3 })));
    expect(withRetryAfter.effects).toEqual([{ type: "wait", ms: 3000 }]);
    expect([0, 1, 2, 3, 4, 9].map((a) => retryDelay(a))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
  });
  it("retrying twice: the attempt counts up and the wait grows", () => {
    const once = run(sending(), draftAnswer(bad(503)), { type: "timer" }).state;
    const { state, effects } = saveTransition(once, draftAnswer(bad(503)));
    expect(state.attempt).toBe(2);
    expect(effects).toEqual([{ type: "wait", ms: 2000 }]);
    expect(saveStateText(state)).toBe("Not saved yet — retrying (attempt 2)");
    // A stored save resets the count.
    expect(run(state, { type: "timer" }, draftAnswer(ok(1))).state.attempt).toBe(0);
  });
  it("saving → refused on 422: the field errors land on their fields", () => {
    const { state } = saveTransition(sending(), draftAnswer(bad(422, "too long", { errors: { notes: "Too long." } })));
    expect(state).toMatchObject({ status: "refused", problem: "too long", errors: { notes: "Too long." } });
    expect(saveStateText(state)).toBe("Not saved");
  });
  it("an answer with no draft in flight is ignored", () => {
    const s = fresh();
    expect(saveTransition(s, draftAnswer(ok(9)))).toEqual({ state: s, effects: [] });
  });
});

describe("submit", () => {
  it("with problems: errors at the fields and the message, nothing sent", () => {
    const { state, effects } = saveTransition(fresh(), submit({ label: "Choose one." }));
    expect(state.errors).toEqual({ label: "Choose one." });
    expect(state.message).toBe("Incomplete.");
    expect(effects).toEqual([]);
  });
  it("a revision with problems is still sent, so that a stale one answers with the conflict", () => {
    const s = run(fresh("revision", 5, 2), change({ notes: "x" })).state;
    const { state, effects } = saveTransition(s, submit({ label: "Choose one." }));
    expect(state.inFlight).toBe("submit");
    expect(effects).toContainEqual({ type: "send", intent: "submit", values: { notes: "x", label: "" }, version: 2 });
  });
  it("sends at once when nothing is in flight, and stops the autosave timer", () => {
    const s = run(fresh("draft", null, 4), change({ label: "y" })).state;
    const { state, effects } = saveTransition(s, submit());
    expect(state.inFlight).toBe("submit");
    expect(submitting(state)).toBe(true);
    expect(effects).toEqual([
      { type: "stopTimer" },
      { type: "send", intent: "submit", values: { notes: "", label: "y" }, version: 4 },
    ]);
  });
  it("waits for a draft in flight, then submits at the draft's new version", () => {
    const waiting = saveTransition(sending(), submit());
    expect(waiting.state.submitWaiting).toBe(true);
    expect(submitting(waiting.state)).toBe(true);
    expect(waiting.effects).toEqual([]);
    const { state, effects } = saveTransition(waiting.state, draftAnswer(ok(1)));
    expect(state.inFlight).toBe("submit");
    expect(effects).toContainEqual({ type: "send", intent: "submit", values: { notes: "a", label: "" }, version: 1 });
  });
  it("a draft refused while a submission waits drops the submission", () => {
    const waiting = saveTransition(sending(), submit()).state;
    const { state } = saveTransition(waiting, draftAnswer(bad(409)));
    expect(state.submitWaiting).toBe(false);
    expect(state.status).toBe("conflict");
  });
  it("is ignored while submitting, and on read-only work", () => {
    const inFlight = saveTransition(fresh(), submit()).state;
    expect(saveTransition(inFlight, submit()).effects).toEqual([]);
    expect(saveTransition(fresh("readOnly"), submit()).effects).toEqual([]);
  });
});

describe("submit answer", () => {
  it("ok → saved, submitted work is a revision now, and the page is told", () => {
    const s = saveTransition(run(fresh(), change({ label: "y" })).state, submit()).state;
    const result = ok(2, 77);
    const { state, effects } = saveTransition(s, submitAnswer(result));
    expect(state).toMatchObject({ status: "saved", version: 2, savedAt: 77, mode: "revision", dirty: false });
    expect(effects).toEqual([{ type: "submitted", result }]);
  });
  it("409 → conflict, which replaces the message and the field errors", () => {
    const s = { ...saveTransition(fresh(), submit()).state, errors: { label: "x" }, message: "m" };
    const { state } = saveTransition(s, submitAnswer(bad(409, "someone else")));
    expect(state).toMatchObject({ status: "conflict", problem: "someone else", message: null, errors: {} });
  });
  it("another refusal keeps its message above the button and its field errors", () => {
    const s = saveTransition(fresh(), submit()).state;
    const { state } = saveTransition(s, submitAnswer(bad(422, "Incomplete", { errors: { label: "Choose." } })));
    expect(state).toMatchObject({ message: "Incomplete", errors: { label: "Choose." }, dirty: true, inFlight: null });
  });
});

describe("page hidden or left (keepalive request)", () => {
  it("sends the pending draft at once", () => {
    const s = run(fresh("draft", null, 2), change({ notes: "bye" })).state;
    const { state, effects } = saveTransition(s, { type: "pageHidden" });
    expect(state).toMatchObject({ inFlight: "beacon", status: "saving", dirty: false });
    expect(effects).toEqual([
      { type: "stopTimer" },
      { type: "beacon", values: { notes: "bye", label: "" }, version: 2 },
    ]);
    expect(pendingWork(state)).toBe(true);
  });
  it("sends nothing without a change, in a conflict, with a save in flight, or for a revision", () => {
    expect(saveTransition(fresh(), { type: "pageHidden" }).effects).toEqual([]);
    expect(saveTransition({ ...fresh(), dirty: true, status: "conflict" }, { type: "pageHidden" }).effects).toEqual([]);
    expect(saveTransition({ ...sending(), dirty: true }, { type: "pageHidden" }).effects).toEqual([]);
    expect(saveTransition({ ...fresh("revision"), dirty: true }, { type: "pageHidden" }).effects).toEqual([]);
  });
  const beaconSent = () => run(fresh("draft", null, 2), change({ notes: "bye" }), { type: "pageHidden" }).state;
  it("stored: the version from the answer's header", () => {
    const { state } = saveTransition(beaconSent(), {
      type: "beaconAnswer",
      status: 200,
      version: 3,
      savedAt: 50,
      now: 99,
    });
    expect(state).toMatchObject({ status: "saved", version: 3, savedAt: 50, draftSaved: true });
  });
  it("stored, headers lost on the way: the version is the one sent plus 1, never a false conflict", () => {
    const { state } = saveTransition(beaconSent(), {
      type: "beaconAnswer",
      status: 200,
      version: null,
      savedAt: null,
      now: 99,
    });
    expect(state).toMatchObject({ status: "saved", version: 3, savedAt: 99 });
  });
  it("409 → conflict with the one wording; any other failure → retrying", () => {
    const conflict = saveTransition(beaconSent(), {
      type: "beaconAnswer",
      status: 409,
      version: null,
      savedAt: null,
      now: 1,
    });
    expect(conflict.state).toMatchObject({ status: "conflict", problem: CONFLICT_MESSAGE, dirty: true });
    const offline = saveTransition(beaconSent(), {
      type: "beaconAnswer",
      status: 0,
      version: null,
      savedAt: null,
      now: 1,
    });
    expect(offline.state).toMatchObject({ status: "retrying", dirty: true, attempt: 1 });
    expect(offline.effects).toEqual([{ type: "wait", ms: 1000 }]);
  });
});

describe("leave (a navigation inside the app)", () => {
  it("nothing pending: goes on at once", () => {
    expect(saveTransition(fresh(), { type: "leave" }).effects).toEqual([{ type: "proceed" }]);
  });
  it("a pending change: saved first, then the navigation goes on", () => {
    const s = run(fresh(), change({ notes: "a" })).state;
    const flushing = saveTransition(s, { type: "leave" });
    expect(flushing.state.leaving).toBe(true);
    expect(flushing.effects).toContainEqual({
      type: "send",
      intent: "draft",
      values: { notes: "a", label: "" },
      version: 0,
    });
    const done = saveTransition(flushing.state, draftAnswer(ok(1)));
    expect(done.state.leaving).toBe(false);
    expect(done.effects).toEqual([{ type: "proceed" }]);
  });
  it("a save in flight: waits for it; changes typed meanwhile are sent before leaving", () => {
    const waiting = saveTransition({ ...sending(), dirty: true }, { type: "leave" });
    expect(waiting.effects).toEqual([]);
    const again = saveTransition(waiting.state, draftAnswer(ok(1)));
    expect(again.effects).toContainEqual({
      type: "send",
      intent: "draft",
      values: { notes: "a", label: "" },
      version: 1,
    });
  });
  it("the save fails: stays on the page and says why", () => {
    const flushing = run(fresh(), change({ notes: "a" }), { type: "leave" }).state;
    const { state, effects } = saveTransition(flushing, draftAnswer(bad(503)));
    expect(effects).toContainEqual({ type: "stay" });
    expect(state.message).toBe(NOT_MOVED_MESSAGE);
    expect(state.leaving).toBe(false);
  });
  it("a conflict, a refusal or an unsaved revision: the user is asked", () => {
    expect(saveTransition({ ...fresh(), dirty: true, status: "conflict" }, { type: "leave" }).effects).toEqual([
      { type: "askLeave", question: LEAVE_UNSAVED_QUESTION },
    ]);
    expect(saveTransition({ ...fresh(), status: "refused" }, { type: "leave" }).effects).toEqual([
      { type: "askLeave", question: LEAVE_UNSAVED_QUESTION },
    ]);
    const revising = run(fresh("revision", 5), change({ notes: "x" })).state;
    expect(saveTransition(revising, { type: "leave" }).effects).toEqual([
      { type: "askLeave", question: LEAVE_REVISION_QUESTION },
    ]);
  });
  it("a submission answered while leaving lets the page move on to where the submission goes", () => {
    const s = { ...saveTransition(fresh(), submit()).state, leaving: true };
    const result = ok(1);
    expect(saveTransition(s, submitAnswer(result)).effects).toEqual([{ type: "stay" }, { type: "submitted", result }]);
  });
  it("read-only work never holds a navigation", () => {
    expect(pendingWork({ ...fresh("readOnly"), dirty: true })).toBe(false);
  });
});

describe("discard", () => {
  it("revising → saved: back to the submitted values", () => {
    const s = run(fresh("revision", 5), change({ notes: "second thought" })).state;
    const { state } = saveTransition({ ...s, errors: { notes: "x" }, message: "m" }, { type: "discard" });
    expect(state).toMatchObject({ status: "saved", dirty: false, values: START, errors: {}, message: null });
    expect(pendingWork(state)).toBe(false);
  });
  it("only for a revision", () => {
    const s = run(fresh(), change({ notes: "x" })).state;
    expect(saveTransition(s, { type: "discard" }).state).toBe(s);
  });
});

describe("mode", () => {
  it("draft → revision with a change pending: revising; → readOnly stops the timer", () => {
    const s = run(fresh(), change({ notes: "x" })).state;
    expect(saveTransition(s, { type: "mode", mode: "revision" }).state.status).toBe("revising");
    expect(saveTransition(s, { type: "mode", mode: "readOnly" }).effects).toEqual([{ type: "stopTimer" }]);
    expect(saveTransition(s, { type: "mode", mode: "draft" }).state).toBe(s);
  });
});

describe("what the footer says", () => {
  it("idle: drafts save automatically, or nothing for submitted work", () => {
    expect(saveStateText(fresh())).toBe("Drafts save automatically");
    expect(saveStateText(fresh("revision"))).toBe("");
    expect(saveStateText(run(fresh(), change({ notes: "x" })).state)).toBe("Unsaved changes…");
    expect(saveStateText(sending())).toBe("Saving…");
  });
});
