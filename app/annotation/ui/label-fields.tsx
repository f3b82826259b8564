/**
 * The fields of a label (docs/safe-psych.md#annotation): sufficiency; for sufficient, the ICD-10 code and the earliest sufficient section;
 * for insufficient, the missing information. Shared by the annotator's and the adjudicator's forms.
 */
import { useEffect, useRef, useState, type RefObject } from "react";
import { MISSING_INFO } from "~/labels/labels";
import { Icd10Picker } from "../../icd10/ui/icd10-picker";
import { TextLimit, limitProps } from "../../work-items/ui/text-limit";
import { TEXT_LIMITS } from "../../work-items/domain/text-limits";

export interface LabelValues {
  sufficiency: "" | "sufficient" | "insufficient";
  icd10: string;
  earliestSection: number | null;
  missingInfo: string[];
  missingOther: string;
}

export function LabelFields({
  values,
  update,
  sections,
  errors,
  disabled = false,
  codeInput,
  missingRef,
  sufficiencyRef,
  onCodeDone,
  shortcuts = false,
}: {
  values: LabelValues;
  update: (patch: Partial<LabelValues>) => void;
  sections: { order: number }[];
  errors: Record<string, string>;
  disabled?: boolean;
  codeInput?: RefObject<HTMLInputElement>;
  missingRef?: RefObject<HTMLFieldSetElement>;
  sufficiencyRef?: RefObject<HTMLFieldSetElement>;
  onCodeDone?: () => void;
  /** Show the annotator page's keyboard shortcuts next to the fields. */
  shortcuts?: boolean;
}) {
  const T = sections.length;
  return (
    <>
      <fieldset disabled={disabled} aria-describedby="sufficiency-question" ref={sufficiencyRef}>
        {/* A short legend: a long one wraps across the fieldset's border, with its key caps under the line. */}
        <legend>
          Sufficiency{" "}
          {shortcuts ? (
            <>
              <kbd>S</kbd>/<kbd>I</kbd>
            </>
          ) : null}
        </legend>
        <p id="sufficiency-question" style={{ margin: "0 0 0.3rem" }}>
          Does the note hold enough information for a diagnosis?
        </p>
        <label className="inline">
          <input
            type="radio"
            name="sufficiency"
            value="sufficient"
            checked={values.sufficiency === "sufficient"}
            onChange={() => update({ sufficiency: "sufficient" })}
          />
          Sufficient
        </label>
        <label className="inline">
          <input
            type="radio"
            name="sufficiency"
            value="insufficient"
            checked={values.sufficiency === "insufficient"}
            onChange={() => update({ sufficiency: "insufficient" })}
          />
          Insufficient
        </label>
        {errors.sufficiency ? (
          <p className="field-error" role="alert">
            {errors.sufficiency}
          </p>
        ) : null}
      </fieldset>

      {values.sufficiency === "sufficient" ? (
        <>
          <fieldset disabled={disabled}>
            <legend>ICD-10 diagnosis {shortcuts ? <kbd>/</kbd> : null}</legend>
            <Icd10Picker
              ref={codeInput}
              value={values.icd10}
              onChange={(code) => update({ icd10: code })}
              disabled={disabled}
              error={errors.icd10}
              onDone={onCodeDone}
            />
          </fieldset>
          <fieldset disabled={disabled}>
            <legend>
              Earliest sufficient section{" "}
              {shortcuts ? (
                <>
                  <kbd>1</kbd>–<kbd>{T}</kbd>
                </>
              ) : null}
            </legend>
            {sections.map((s) => (
              <label key={s.order} className="inline">
                <input
                  type="radio"
                  name="earliestSection"
                  value={s.order}
                  checked={values.earliestSection === s.order}
                  onChange={() => update({ earliestSection: s.order })}
                />
                {s.order}
              </label>
            ))}
            {errors.earliestSection ? (
              <p className="field-error" role="alert">
                {errors.earliestSection}
              </p>
            ) : null}
          </fieldset>
        </>
      ) : null}

      {values.sufficiency === "insufficient" ? (
        <fieldset disabled={disabled} ref={missingRef}>
          <legend>Missing information {shortcuts ? <kbd>M</kbd> : null}</legend>
          {MISSING_INFO.map((m) => (
            <label key={m.key} className="inline" style={{ display: "flex" }}>
              <input
                type="checkbox"
                name="missingInfo"
                value={m.key}
                checked={values.missingInfo.includes(m.key)}
                onChange={(e) =>
                  update({
                    missingInfo: e.target.checked
                      ? [...values.missingInfo, m.key]
                      : values.missingInfo.filter((k) => k !== m.key),
                  })
                }
              />
              {m.label}
            </label>
          ))}
          {values.missingInfo.includes("other") ? (
            <>
              <label htmlFor="missingOther">Other missing information</label>
              <input
                id="missingOther"
                type="text"
                value={values.missingOther}
                onChange={(e) => update({ missingOther: e.target.value })}
                style={{ width: "100%" }}
                {...limitProps("missingOther", values.missingOther, TEXT_LIMITS.missingOther)}
              />
              <TextLimit
                id="missingOther"
                value={values.missingOther}
                max={TEXT_LIMITS.missingOther}
                what="Other missing information"
              />
            </>
          ) : null}
          {errors.missingInfo ? (
            <p className="field-error" role="alert">
              {errors.missingInfo}
            </p>
          ) : null}
          {errors.missingOther && values.missingOther.length <= TEXT_LIMITS.missingOther ? (
            <p className="field-error" role="alert">
              {errors.missingOther}
            </p>
          ) : null}
        </fieldset>
      ) : null}
    </>
  );
}

/**
 * The refs LabelFields needs and the focus requests its keys make (`/` the code search, `M` the missing
 * information): a request focuses its field after the render that shows it, since the field may only appear with it.
 * `/` on a note not yet judged sufficient records nothing: `searchCode` then moves the focus to the sufficiency
 * question (the code search belongs to a sufficient note), so looking a code up never anchors the judgement.
 */
export function useLabelFieldFocus() {
  const codeInput = useRef<HTMLInputElement>(null);
  const missingRef = useRef<HTMLFieldSetElement>(null);
  const sufficiencyRef = useRef<HTMLFieldSetElement>(null);
  const [codeRequests, setCodeRequests] = useState(0);
  useEffect(() => {
    if (codeRequests) codeInput.current?.focus();
  }, [codeRequests]);
  const [missingRequests, setMissingRequests] = useState(0);
  useEffect(() => {
    if (missingRequests) missingRef.current?.querySelector("input")?.focus();
  }, [missingRequests]);
  const focusCode = () => setCodeRequests((n) => n + 1);
  return {
    codeInput,
    missingRef,
    sufficiencyRef,
    focusCode,
    focusMissing: () => setMissingRequests((n) => n + 1),
    searchCode: (sufficiency: LabelValues["sufficiency"]) => {
      if (sufficiency === "sufficient") focusCode();
      else sufficiencyRef.current?.querySelector<HTMLInputElement>('input[value="sufficient"]')?.focus();
    },
  };
}
