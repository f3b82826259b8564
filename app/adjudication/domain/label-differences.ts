/**
 * Field-by-field comparison of the labels an adjudicator sees after the reveal (docs/safe-psych.md, "Disagreement and
 * adjudication"): Annotator A, Annotator B and, in two-phase mode, their own independent judgement. A field differs
 * when the labels do not all give it the same value; a field that applies to none of them (the ICD-10 code of three
 * insufficient labels) is left out.
 */
import { MISSING_INFO, type CaseLabel } from "../../labels/labels";

export type LabelField = "sufficiency" | "icd10" | "earliestSection" | "missingInfo";

export interface FieldComparison {
  field: LabelField;
  title: string;
  /** One display value per label, in the order given; "—" where the field does not apply to that label. */
  values: string[];
  differs: boolean;
}

const NOT_APPLICABLE = "—";

function fieldValue(label: CaseLabel, field: LabelField): string {
  switch (field) {
    case "sufficiency":
      return label.sufficiency;
    case "icd10":
      return label.sufficiency === "sufficient" ? label.icd10 : NOT_APPLICABLE;
    case "earliestSection":
      return label.sufficiency === "sufficient" ? String(label.earliestSection) : NOT_APPLICABLE;
    case "missingInfo": {
      if (label.sufficiency !== "insufficient") return NOT_APPLICABLE;
      const names = label.missingInfo.map((k) => MISSING_INFO.find((m) => m.key === k)?.label ?? k);
      return names.join("; ") + (label.missingInfoOther ? ` (${label.missingInfoOther})` : "");
    }
  }
}

const FIELDS: { field: LabelField; title: string }[] = [
  { field: "sufficiency", title: "Sufficiency" },
  { field: "icd10", title: "ICD-10" },
  { field: "earliestSection", title: "Earliest section" },
  { field: "missingInfo", title: "Missing information" },
];

/** The fields of `labels` side by side, each marked whether the labels differ on it. */
export function compareLabels(labels: readonly CaseLabel[]): FieldComparison[] {
  return FIELDS.map(({ field, title }) => {
    const values = labels.map((l) => fieldValue(l, field));
    return { field, title, values, differs: new Set(values).size > 1 };
  }).filter((c) => c.values.some((v) => v !== NOT_APPLICABLE));
}
