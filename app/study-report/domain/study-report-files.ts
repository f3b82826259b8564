/** The file name stem of the study report downloads (JSON, Markdown); shared by the page and the download route. */
export const REPORT_FILE_STEM = "study-report";
/** The stem of the agreement-per-pair-and-over-time download (JSON). */
export const RATER_AGREEMENT_FILE_STEM = "rater-agreement";
