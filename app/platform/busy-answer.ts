/**
 * The body of a 503 answered because the database's write lock is held by another process (an import, a backup):
 * shared by the server's answer (busy-answer.server.ts) and the error page that shows it (app/ui/busy-page.tsx).
 */
export interface BusyAnswer {
  busy: true;
  /** A refused action changed nothing and can be sent again as it was; a refused loader is read again by reloading. */
  during: "action" | "loader";
  message: string;
  retryAfter: number;
}

export function isBusyAnswer(data: unknown): data is BusyAnswer {
  return typeof data === "object" && data !== null && (data as { busy?: unknown }).busy === true;
}
