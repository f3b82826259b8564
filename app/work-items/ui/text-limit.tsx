/**
 * The counter and the field-level error of a free-text field with a limit (app/work-items/domain/text-limits.ts):
 * the count shows once the text nears its limit, and a text over it is marked at the field while it stays in the
 * page, so the user can shorten it without losing anything.
 */
import type { ReactNode, Ref } from "react";
import { COUNTER_FROM, TEXT_LIMITS, tooLongMessage } from "../domain/text-limits";

export function TextLimit({
  id,
  value,
  max,
  what,
  error,
}: {
  /** The field's id; the counter is `${id}-count`, for aria-describedby. */
  id: string;
  value: string;
  max: number;
  /** What the field is called in the error: "Notes", "A comment". */
  what: string;
  /** The server's or the check's message for this field, if any. */
  error?: string;
}) {
  const length = value.length;
  const over = length > max;
  const message = over ? tooLongMessage(what, max, length) : error;
  return (
    <>
      {length >= max * COUNTER_FROM ? (
        <p
          id={`${id}-count`}
          className={`char-count${over ? " over" : ""}`}
          data-testid={`${id}-count`}
          aria-live="polite"
        >
          {length.toLocaleString("en")} / {max.toLocaleString("en")} characters
        </p>
      ) : null}
      {message ? (
        <p className="field-error" role="alert" data-testid={`${id}-error`}>
          {message}
        </p>
      ) : null}
    </>
  );
}

/** The attributes that tie a limited field to its counter and error. */
export function limitProps(id: string, value: string, max: number) {
  return { "aria-invalid": value.length > max || undefined, "aria-describedby": `${id}-count` } as const;
}

/**
 * A labelled free-text field with its limit: the label, the text area (or one-line input), and its counter and
 * error. The field keeps every character typed, over the limit too.
 */
export function LimitedText({
  id,
  label,
  what,
  value,
  max,
  error,
  onChange,
  disabled,
  oneLine = false,
  inputRef,
}: {
  id: string;
  label: ReactNode;
  /** What the field is called in the error: "Notes", "A comment". */
  what: string;
  value: string;
  max: number;
  error?: string;
  onChange: (value: string) => void;
  disabled?: boolean;
  /** An `<input type="text">` instead of a text area. */
  oneLine?: boolean;
  /** The field's element: an input's for `oneLine`, else the text area's. */
  inputRef?: Ref<HTMLInputElement> | Ref<HTMLTextAreaElement>;
}) {
  const field = {
    id,
    value,
    disabled,
    onChange: (e: { target: { value: string } }) => onChange(e.target.value),
    ...limitProps(id, value, max),
  };
  return (
    <>
      <label htmlFor={id}>{label}</label>
      {oneLine ? (
        <input type="text" ref={inputRef as Ref<HTMLInputElement>} {...field} />
      ) : (
        <textarea ref={inputRef as Ref<HTMLTextAreaElement>} {...field} />
      )}
      <TextLimit id={id} value={value} max={max} what={what} error={error} />
    </>
  );
}

/** The optional free notes of a workspace (annotation, judge validation, screening), with their limit. */
export function NotesField({
  value,
  error,
  onChange,
  disabled,
}: {
  value: string;
  error?: string;
  onChange: (value: string) => void;
  disabled?: boolean;
}) {
  return (
    <LimitedText
      id="notes"
      label="Notes (optional)"
      what="Notes"
      value={value}
      max={TEXT_LIMITS.notes}
      error={error}
      onChange={onChange}
      disabled={disabled}
    />
  );
}
