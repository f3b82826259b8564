/**
 * Synthetic MENTAT files at any size, for the tests and measurements of `mentat-import-ratings` (docs/mentat.md,
 * "Importing MENTAT's annotation files"): a bank of `n` triage questions with ids 1..n (the `mentat-import` CSV),
 * and one rater's jsPsych export rating each of them — the layout of test/fixtures/mentat-annotations/annotated_data
 * (four leading instruction rows, the rater id in the second, a closing row). The scores only need to be valid.
 */
export function mentatBankCsv(n: number): string {
  const rows = Array.from(
    { length: n },
    (_, i) => `${i + 1},triage,Question ${i + 1}: what is the most appropriate next step?,A,B,C,D,E,a`,
  );
  return ["id,domain,question,a,b,c,d,e,answer", ...rows].join("\n") + "\n";
}

/** `rater`'s ratings of questions 1..n; `shift` changes every score (a second version of the same ratings). */
export function mentatRatingsCsv(rater: string, n: number, shift = 0): string {
  const header =
    "rt,stimulus,response,trial_type,trial_index,time_elapsed,internal_node_id,participant_name,rater_id,question_order,q_no,q,q_key";
  const instruction = (i: number, who = "") =>
    `1000,"<p>Instructions</p>", ,html-keyboard-response,${i},${i},0.0-${i}.0,${who},${who},,,,`;
  const rows = Array.from({ length: n }, (_, i) => {
    const scores = [0, 1, 2, 3, 4].map((k) => (i * 7 + k * 13 + shift) % 101);
    const response = JSON.stringify({
      Q0: scores[0],
      Q1: scores[1],
      Q2: scores[2],
      Q3: scores[3],
      Q4: scores[4],
      comment: "",
    });
    const order = [(i + 0) % 5, (i + 1) % 5, (i + 2) % 5, (i + 3) % 5, (i + 4) % 5];
    return `2000,,"${response.replace(/"/g, '""')}",survey-slider,${i + 4},${i},0.0-${i + 4}.0,,,"[${order.join(",")}]",${i + 1},Question ${i + 1},q_male`;
  });
  return (
    [header, instruction(0), instruction(1, rater), instruction(2), instruction(3), ...rows, instruction(n + 4)].join(
      "\n",
    ) + "\n"
  );
}
