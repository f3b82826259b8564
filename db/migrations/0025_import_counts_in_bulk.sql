-- Custom SQL migration file, put your code below! --
-- The study counters count visible cases only (docs/reliability.md, "Bulk imports"): the rows an import is still
-- writing (import_run listed in import_runs) are left out by the triggers, and the import adds its cases to the
-- counters once, in its last transaction (app/platform/import-runs.server.ts, finish). A hidden case is written
-- with its progress state already set (app/annotation/studies.server.ts, caseWriter), so its reference labels need
-- no update of it.
DROP TRIGGER `cases_progress_insert`;
--> statement-breakpoint
CREATE TRIGGER `cases_progress_insert` AFTER INSERT ON `cases` FOR EACH ROW WHEN NEW.`import_run` IS NULL OR NEW.`import_run` NOT IN (SELECT `id` FROM `import_runs`) BEGIN
  INSERT INTO `study_progress_counts` (`study_id`, `state`, `n`) VALUES (NEW.`study_id`, NEW.`progress_state`, 1) ON CONFLICT (`study_id`, `state`) DO UPDATE SET `n` = `n` + (1);
END;
--> statement-breakpoint
DROP TRIGGER `cases_progress_update`;
--> statement-breakpoint
CREATE TRIGGER `cases_progress_update` AFTER UPDATE OF `progress_state`, `study_id` ON `cases` FOR EACH ROW WHEN (OLD.`progress_state` IS NOT NEW.`progress_state` OR OLD.`study_id` IS NOT NEW.`study_id`) AND (NEW.`import_run` IS NULL OR NEW.`import_run` NOT IN (SELECT `id` FROM `import_runs`)) BEGIN
  INSERT INTO `study_progress_counts` (`study_id`, `state`, `n`) VALUES (OLD.`study_id`, OLD.`progress_state`, -1) ON CONFLICT (`study_id`, `state`) DO UPDATE SET `n` = `n` + (-1);
  INSERT INTO `study_progress_counts` (`study_id`, `state`, `n`) VALUES (NEW.`study_id`, NEW.`progress_state`, 1) ON CONFLICT (`study_id`, `state`) DO UPDATE SET `n` = `n` + (1);
END;
--> statement-breakpoint
DROP TRIGGER `cases_progress_delete`;
--> statement-breakpoint
CREATE TRIGGER `cases_progress_delete` AFTER DELETE ON `cases` FOR EACH ROW WHEN OLD.`import_run` IS NULL OR OLD.`import_run` NOT IN (SELECT `id` FROM `import_runs`) BEGIN
  INSERT INTO `study_progress_counts` (`study_id`, `state`, `n`) VALUES (OLD.`study_id`, OLD.`progress_state`, -1) ON CONFLICT (`study_id`, `state`) DO UPDATE SET `n` = `n` + (-1);
END;
--> statement-breakpoint
DROP TRIGGER `reference_labels_progress_insert`;
--> statement-breakpoint
CREATE TRIGGER `reference_labels_progress_insert` AFTER INSERT ON `reference_labels` FOR EACH ROW WHEN NOT EXISTS (SELECT 1 FROM `cases` WHERE `id` = NEW.`case_id` AND `import_run` IN (SELECT `id` FROM `import_runs`)) BEGIN
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = NEW.`case_id`;
END;
--> statement-breakpoint
-- An import running while this migration runs: its rows were counted by the old triggers; they are counted again
-- when it finishes, so they leave the counters now.
UPDATE `study_progress_counts` SET `n` = `n` - (SELECT count(*) FROM `cases` `c` WHERE `c`.`import_run` IN (SELECT `id` FROM `import_runs`) AND `c`.`study_id` = `study_progress_counts`.`study_id` AND `c`.`progress_state` = `study_progress_counts`.`state`);
