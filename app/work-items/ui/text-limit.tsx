/**
 * The counter and the field-level error of a free-text field with a limit (app/work-items/domain/text-limits.ts):
 * the count shows once the text nears its limit, and a text over it is marked at the field while it stays in the
 * page, so the user can shorten it without losing anything.
 */
import { COUNTER_FROM, tooLongMessage } from "../domain/text-limits";

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
