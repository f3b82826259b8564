/**
 * The case page's place in the annotator's queue (docs/architecture.md, "Cheaper pages"): previous case, next open
 * case and progress, computed for the page without building the annotator's whole list, must be exactly what the
 * list says (docs/rater-quality.md: quality items among the ordinary ones by their sort key, the training round
 * hiding everything else of its study until done).
 *
 * Property-style: seeded random queues — one to four studies whose names sort in different orders (upper and lower
 * case, accents, an emoji and a private-use character, whose UTF-16 and UTF-8 orders differ), with and without rater
 * quality, retest, calibration and training items whose sort keys fall between, on and beside the cases' positions
 * (ties included), training pending or done, quality items of a study the annotator has no case in, and every mix
 * of not started, draft, submitted and locked. The oracle is the list page's own function (`listAnnotatorCases`)
 * with the work-item engine's `nextOpenItem`, `previousItem` and `progressOf`: for every item of the annotator,
 * opened by each of its addresses, the page must show the list's key, label and study, the list's previous and next
 * open keys and its progress, and an item the list does not show must be closed (the training round) — never shown.
 * A failing case names its seed, so it can be replayed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  annotations,
  assignments,
  cases,
  qualityItems,
  studies,
  studyQualitySettings,
  type QualityKind,
} from "../../db/schema";
import type { Db } from "../../app/platform/db.server";
import { getAnnotatorItem, listAnnotatorCases } from "../../app/annotation/annotations.server";
import { nextOpenItem, previousItem, progressOf } from "../../app/work-items/domain/work-item";
import { qualityOn } from "../../app/annotation/domain/rater-quality";
import { freshDb, makeUser } from "../support/db";

let db: Db;
let cleanup: () => void;
let me: string;
let other: string;
beforeAll(async () => {
  ({ db, cleanup } = freshDb());
  me = (await makeUser(db, "ann1", ["annotator"])).id;
  other = (await makeUser(db, "ann2", ["annotator"])).id;
});
afterAll(() => cleanup());

/** mulberry32: a small seeded generator, so that a failing queue can be rebuilt from its seed. */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}

const NAMES = ["Bench", "alpha", "Alpha", "beta", "Zeta", "Ärzte", "study 10", "study 9", "😀 pilot", "\uE000 private"];
const STATES = [null, "draft", "submitted", "locked"] as const;

function clear() {
  for (const t of [qualityItems, annotations, assignments, cases, studyQualitySettings, studies]) db.delete(t).run();
}

/** One random queue for `me` (and a little work of `other`, which must never show). */
function build(seed: number) {
  const r = generator(seed);
  clear();
  const names = [...NAMES].sort(() => r.next() - 0.5).slice(0, r.int(1, 4));
  const studyIds: number[] = [];
  const caseIdsOf = new Map<number, number[]>();
  for (const name of names) {
    const studyId = db.insert(studies).values({ name, createdAt: 1 }).returning().get().id;
    studyIds.push(studyId);
    const n = r.int(0, 9);
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      // Mostly import order; sometimes two cases share a position (the list breaks the tie by case id).
      const position = r.chance(0.1) && i > 0 ? i : i + 1;
      const row = { studyId, externalId: `${name}-${i}`, position, numSections: 3, contentHash: "h", createdAt: 1 };
      ids.push(db.insert(cases).values(row).returning().get().id);
    }
    caseIdsOf.set(studyId, ids);
    const setting = r.pick(["none", "off", "retest", "calibration", "training"] as const);
    if (setting !== "none")
      db.insert(studyQualitySettings)
        .values({
          studyId,
          retestFraction: setting === "retest" ? 0.2 : 0,
          calibrationRate: setting === "calibration" ? 0.2 : 0,
          training: setting === "training",
          updatedAt: 1,
        })
        .run();
  }
  const allCases = [...caseIdsOf.values()].flat();
  for (const [studyId, ids] of caseIdsOf) {
    for (const caseId of ids) {
      const whose = r.chance(0.7) ? me : other;
      const a = db.insert(assignments).values({ caseId, annotatorId: whose, assignedAt: 1 }).returning().get();
      const status = r.pick(STATES);
      if (status)
        db.insert(annotations)
          .values({ assignmentId: a.id, caseId, annotatorId: whose, status, updatedAt: 2, version: 1 })
          .run();
    }
    // Quality items of this study, sometimes in a study where `me` has no case at all.
    const positions = db
      .select({ p: cases.position })
      .from(cases)
      .all()
      .map((c) => c.p);
    const sortKeys: number[] = [];
    const kinds: QualityKind[] = ["retest", "calibration", "training"];
    const used = new Set<string>();
    const nTraining = { n: 0 };
    for (let k = r.int(0, 5); k > 0 && allCases.length; k--) {
      const kind = r.pick(kinds);
      const caseId = r.pick(allCases);
      if (used.has(`${caseId}:${kind}`)) continue;
      used.add(`${caseId}:${kind}`);
      const sortKey =
        kind === "training"
          ? -1_000_000 + nTraining.n++
          : r.chance(0.2) && sortKeys.length
            ? r.pick(sortKeys) // two quality items at the same place
            : r.chance(0.2) && positions.length
              ? r.pick(positions) // on a case's position
              : r.int(0, 10) + r.pick([-0.25, 0.25, 0.5, 0.75]);
      sortKeys.push(sortKey);
      const status = r.pick(STATES);
      db.insert(qualityItems)
        .values({
          studyId,
          annotatorId: r.chance(0.85) ? me : other,
          caseId,
          kind,
          sortKey,
          createdAt: 1,
          status,
          version: status ? 1 : 0,
          updatedAt: status ? 2 : null,
        })
        .run();
    }
  }
  return { studyIds };
}

/**
 * Every address of every item of `me`: an assignment by its key, and by case id where its study has no rater quality
 * (there the case id names nothing: `refused`); a quality item by its key.
 */
function itemsOfMe(): { addresses: string[]; refused: string[] }[] {
  const own = db.select().from(assignments).all();
  const quality = db.select().from(qualityItems).all();
  const studyOf = new Map(
    db
      .select({ id: cases.id, studyId: cases.studyId })
      .from(cases)
      .all()
      .map((c) => [c.id, c.studyId]),
  );
  const settings = new Map(
    db
      .select()
      .from(studyQualitySettings)
      .all()
      .map((s) => [s.studyId, s]),
  );
  const blind = (caseId: number) => qualityOn(settings.get(studyOf.get(caseId)!) ?? null);
  return [
    ...own
      .filter((a) => a.annotatorId === me)
      .map((a) =>
        blind(a.caseId)
          ? { addresses: [a.itemKey!], refused: [String(a.caseId)] }
          : { addresses: [String(a.caseId), a.itemKey!], refused: [] },
      ),
    ...quality.filter((q) => q.annotatorId === me).map((q) => ({ addresses: [q.itemKey], refused: [] })),
  ];
}

function checkQueue(seed: number) {
  build(seed);
  const list = listAnnotatorCases(db, me);
  const items = itemsOfMe();
  let shown = 0;
  for (const { addresses, refused } of items) {
    for (const address of refused)
      expect(getAnnotatorItem(db, { userId: me, key: address }), `seed ${seed}, item ${address}`).toBeNull();
    const at = list.findIndex((row) => addresses.includes(row.key));
    for (const address of addresses) {
      const got = getAnnotatorItem(db, { userId: me, key: address });
      const where = `seed ${seed}, item ${address}`;
      if (at < 0) {
        expect(got, where).toEqual({ gated: true });
        continue;
      }
      const row = list[at]!;
      expect(got && "view" in got, where).toBe(true);
      if (!got || !("view" in got)) continue;
      expect(
        {
          key: got.view.case.id,
          externalId: got.view.case.externalId,
          studyName: got.view.case.studyName,
          studyId: got.studyId,
          next: got.view.nextCaseId,
          previous: got.view.previousCaseId,
          progress: got.view.progress,
        },
        where,
      ).toEqual({
        key: row.key,
        externalId: row.externalId,
        studyName: row.studyName,
        studyId: row.studyId,
        next: nextOpenItem(list, at)?.key ?? null,
        previous: previousItem(list, at)?.key ?? null,
        progress: progressOf(list),
      });
      // Another annotator never opens it.
      expect(getAnnotatorItem(db, { userId: other, key: address }), where).toBeNull();
    }
    if (at >= 0) shown++;
  }
  // Every row of the list is one of the annotator's items.
  expect(shown, `seed ${seed}`).toBe(list.length);
  return { items: items.length, shown };
}

describe("the case page's previous, next open and progress are the list's", () => {
  it("on 300 random queues, for every item and each of its addresses", () => {
    let items = 0;
    let hidden = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const got = checkQueue(seed);
      items += got.items;
      hidden += got.items - got.shown;
    }
    // The random queues did exercise what they are for: many items, some of them closed by a training round.
    expect(items).toBeGreaterThan(2000);
    expect(hidden).toBeGreaterThan(50);
  }, 120_000); // 300 queues: about 8 s on a quiet machine, over 30 s on a loaded one
});
