/** The rules of new passwords and reset links, as pages state them (docs/security.md, "Accounts"); safe in the browser. */

/** The shortest password accepted. */
export const PASSWORD_MIN_LENGTH = 10;

/** How long an admin's one-time password link can be used. */
export const RESET_LINK_HOURS = 72;

/** The password rules every new password meets, as the pages state them. */
export const PASSWORD_RULES = [
  `at least ${PASSWORD_MIN_LENGTH} characters (a few words make a good one)`,
  "not your username",
  "not the password it replaces",
] as const;
