/**
 * The versions of MENTAT's fit (docs/mentat.md, "Versions of MENTAT's fit"): by default MENTAT's current
 * preferece_HBT.py (2025-01-24: penalty 5, slopes 0.5–2, offsets −3–3, 100 refits), the first version
 * (2025-01-19: penalty 2, slopes 0.8–1.25, 30 refits) by name, and slope bounds settable.
 *
 * Expected values: test/fixtures/bradley-terry/mentat_versions.py → mentat-versions.json, made by running MENTAT's
 * own preferece_HBT.py of each version (SLSQP under sum-to-zero constraints, labels by get_answer_probabilities
 * 'raw') on one fixed data set with several wordings per rater and question and the creator's pseudo-rater 'crtr'.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  CURRENT_MENTAT_FIT,
  fitPreferenceLabels,
  HBT_DEFAULTS,
  MENTAT_FIT_VERSIONS,
  type AnnotationRow,
  type MentatFitVersion,
} from "../../app/mentat/domain/bradley-terry";
import { FitOptionsSchema } from "../../app/mentat/fits.server";

interface Fixture {
  rows: AnnotationRow[];
  versions: Record<
    MentatFitVersion,
    { labels: Record<string, number[]>; raters: Record<string, { slope: number; offset: number }> }
  >;
}
const fixture: Fixture = JSON.parse(
  readFileSync(new URL("../fixtures/bradley-terry/mentat-versions.json", import.meta.url), "utf8"),
);
const top = (p: readonly number[]) => p.indexOf(Math.max(...p));

describe("versions of MENTAT's fit", () => {
  it("defaults to MENTAT's current fit: penalty 5, slopes 0.5–2, offsets −3–3, 100 refits", () => {
    expect(CURRENT_MENTAT_FIT).toBe("2025-01-24");
    expect(HBT_DEFAULTS).toMatchObject({ penalty: 5, slopeBounds: [0.5, 2], offsetBounds: [-3, 3] });
    expect(MENTAT_FIT_VERSIONS["2025-01-19"]).toEqual({
      penalty: 2,
      slopeBounds: [0.8, 1.25],
      offsetBounds: [-3, 3],
      bootstrap: 30,
    });
    expect(FitOptionsSchema.parse({})).toMatchObject({
      fitVersion: "2025-01-24",
      penalty: 5,
      slopeBounds: [0.5, 2],
      bootstrap: 100,
    });
    expect(FitOptionsSchema.parse({ fitVersion: "2025-01-19" })).toMatchObject({
      penalty: 2,
      slopeBounds: [0.8, 1.25],
      bootstrap: 30,
    });
    expect(FitOptionsSchema.parse({ fitVersion: "2025-01-19", penalty: "3", slopeBounds: "0.7,1.5" })).toMatchObject({
      penalty: 3,
      slopeBounds: [0.7, 1.5],
    });
  });

  it("refuses slope bounds that are not LO,HI around 1 and an unknown version", () => {
    for (const bad of ["1.2,2", "0.5", "0.5,0.9", "a,b", "0,2"])
      expect(FitOptionsSchema.safeParse({ slopeBounds: bad }).success).toBe(false);
    expect(FitOptionsSchema.safeParse({ fitVersion: "2025-02-01" }).success).toBe(false);
  });

  for (const version of ["2025-01-24", "2025-01-19"] as const) {
    it(`${version}: gives MENTAT's own labels (≤ 1e-3 per option, same top option) and rater parameters`, () => {
      const expected = fixture.versions[version];
      const labels = fitPreferenceLabels(fixture.rows, 5, {
        bootstrap: 0,
        ...(version === CURRENT_MENTAT_FIT ? {} : { fitVersion: version }),
      });
      expect(labels.options).toMatchObject({
        fitVersion: version,
        penalty: MENTAT_FIT_VERSIONS[version].penalty,
        slopeBounds: MENTAT_FIT_VERSIONS[version].slopeBounds,
      });
      expect(labels.converged).toBe(true);
      let maxDiff = 0;
      for (const q of labels.questions) {
        const ref = expected.labels[q.question];
        q.labels.forEach((p, i) => (maxDiff = Math.max(maxDiff, Math.abs(p - ref[i]))));
        expect(top(q.labels)).toBe(top(ref));
      }
      expect(maxDiff).toBeLessThan(1e-3);
      for (const r of labels.raters) {
        expect(r.slope).toBeCloseTo(expected.raters[r.rater].slope, 2);
        expect(r.offset).toBeCloseTo(expected.raters[r.rater].offset, 2);
      }
    });
  }

  it("the two versions give different labels on the same rows (why the version is recorded)", () => {
    const a = fixture.versions["2025-01-24"].labels;
    const b = fixture.versions["2025-01-19"].labels;
    const shift = Math.max(...Object.keys(a).flatMap((q) => a[q].map((p, i) => Math.abs(p - b[q][i]))));
    expect(shift).toBeGreaterThan(0.01);
  });

  it("holds the slopes within --slope-bounds", () => {
    const labels = fitPreferenceLabels(fixture.rows, 5, { bootstrap: 0, slopeBounds: [0.95, 1.05] });
    expect(labels.options.slopeBounds).toEqual([0.95, 1.05]);
    for (const r of labels.raters) expect(r.slope >= 0.95 && r.slope <= 1.05).toBe(true);
    expect(labels.raters.some((r) => r.slope === 0.95 || r.slope === 1.05)).toBe(true);
  });
});
