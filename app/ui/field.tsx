/**
 * A labelled form field and its error (docs/architecture.md, "Areas"): the error, when there is one, is announced
 * (role="alert") and tied to the input (`aria-invalid`, `aria-describedby`), the same on every form that uses it.
 */
import type { InputHTMLAttributes, ReactNode } from "react";

/** An error under a field or a form; nothing when there is none. */
export function FieldError({ text, id }: { text?: string; id: string }) {
  return text ? (
    <p className="field-error" id={id} role="alert">
      {text}
    </p>
  ) : null;
}

/**
 * A label, its input and the input's error. `after` stands between the input and the error (a form's button, in a
 * one-line form); `errorId` defaults to `<id>-error`.
 */
export function Field({
  id,
  label,
  error,
  errorId = `${id}-error`,
  after,
  ...input
}: {
  id: string;
  label: ReactNode;
  error?: string;
  errorId?: string;
  after?: ReactNode;
} & Omit<InputHTMLAttributes<HTMLInputElement>, "id" | "aria-invalid" | "aria-describedby">) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        {...input}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
      />
      {after}
      <FieldError text={error} id={errorId} />
    </>
  );
}
