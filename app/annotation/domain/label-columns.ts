/**
 * An annotation's label as stored and audited: the page's empty choices ("") become NULL, the rest as typed. One
 * mapping for the annotation and for the retest and calibration items beside it (docs/rater-quality.md).
 */
export function labelColumns<S extends string>(v: {
  sufficiency: S | "";
  icd10: string;
  earliestSection: number | null;
  missingInfo: string[];
  missingOther: string;
  notes: string;
}) {
  return {
    sufficiency: v.sufficiency || null,
    icd10: v.icd10 || null,
    earliestSection: v.earliestSection,
    missingInfo: v.missingInfo,
    missingOther: v.missingOther,
    notes: v.notes,
  };
}
