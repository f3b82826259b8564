/**
 * The error a service throws for a refusal the caller should show: a message in the project's words, the form field
 * it belongs to (if any) and the HTTP status the web layer answers with.
 */
export class ServiceError extends Error {
  constructor(
    message: string,
    public field?: string,
    public status = 400,
  ) {
    super(message);
  }
}
