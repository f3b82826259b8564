/** The file name stem of the study report downloads (JSON, Markdown); shared by the page and the download route. */
export const REPORT_FILE_STEM = "study-report";
