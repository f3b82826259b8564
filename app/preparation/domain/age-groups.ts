/**
 * The age groups an age is generalised into (docs/preparation.md, "Ages"): the Safe-Psych groups 18–27, 28–37, …,
 * 68–77 and 78+, written as the case import writes them ("18-27"). An age under 18 becomes "under 18": the
 * benchmark has no such group, and a reviewer decides what happens to the case.
 */
export const AGE_GROUP_LABELS = ["18-27", "28-37", "38-47", "48-57", "58-67", "68-77", "78+"] as const;

export function ageGroupOf(years: number): string {
  if (years < 18) return "under 18";
  if (years >= 78) return "78+";
  const i = Math.floor((years - 18) / 10);
  return AGE_GROUP_LABELS[i]!;
}
