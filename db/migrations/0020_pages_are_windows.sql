CREATE TABLE `study_annotator_counts` (
	`study_id` integer NOT NULL,
	`annotator_id` text NOT NULL,
	`assigned` integer DEFAULT 0 NOT NULL,
	`started` integer DEFAULT 0 NOT NULL,
	`done` integer DEFAULT 0 NOT NULL,
	`locked` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`study_id`, `annotator_id`)
);
--> statement-breakpoint
CREATE INDEX `study_annotator_counts_annotator_idx` ON `study_annotator_counts` (`annotator_id`);--> statement-breakpoint
CREATE TABLE `study_progress_counts` (
	`study_id` integer NOT NULL,
	`state` text NOT NULL,
	`n` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`study_id`, `state`)
);
--> statement-breakpoint
ALTER TABLE `assignments` ADD `study_id` integer REFERENCES studies(id);--> statement-breakpoint
CREATE INDEX `assignments_study_annotator_idx` ON `assignments` (`study_id`,`annotator_id`);--> statement-breakpoint
ALTER TABLE `cases` ADD `progress_state` text DEFAULT 'unassigned' NOT NULL;--> statement-breakpoint
CREATE INDEX `cases_study_state_pos_idx` ON `cases` (`study_id`,`progress_state`,`position`);--> statement-breakpoint
DROP VIEW `visible_cases`;--> statement-breakpoint
CREATE VIEW `visible_cases` AS select "id", "study_id", "external_id", "position", "age_group", "sex", "num_sections", "content_hash", "version", "created_at", "import_run", "progress_state" from "cases" where ("cases"."import_run" is null or "cases"."import_run" not in (select "import_runs"."id" from "import_runs"));--> statement-breakpoint
-- Kept by the database (docs/architecture.md, "Pages are windows"): each assignment's study, each case's progress
-- state, and the counts the study and progress pages show, so that no page counts or lists a whole study.
-- Backfill first, then the triggers that keep them whatever code writes.
UPDATE `assignments` SET `study_id` = (SELECT `study_id` FROM `cases` WHERE `id` = `assignments`.`case_id`);
--> statement-breakpoint
UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END);
--> statement-breakpoint
INSERT INTO `study_progress_counts` (`study_id`, `state`, `n`) SELECT `study_id`, `progress_state`, count(*) FROM `cases` GROUP BY `study_id`, `progress_state`;
--> statement-breakpoint
INSERT INTO `study_annotator_counts` (`study_id`, `annotator_id`, `assigned`, `started`, `done`, `locked`) SELECT a.`study_id`, a.`annotator_id`, count(*), count(n.`id`), count(CASE WHEN n.`status` IN ('submitted', 'locked') THEN 1 END), count(CASE WHEN n.`status` = 'locked' THEN 1 END) FROM `assignments` a LEFT JOIN `annotations` n ON n.`assignment_id` = a.`id` GROUP BY a.`study_id`, a.`annotator_id`;
--> statement-breakpoint
CREATE TRIGGER `assignments_study_id` AFTER INSERT ON `assignments` FOR EACH ROW WHEN NEW.`study_id` IS NULL BEGIN
  UPDATE `assignments` SET `study_id` = (SELECT `study_id` FROM `cases` WHERE `id` = NEW.`case_id`) WHERE `id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `assignments_counted_insert` AFTER INSERT ON `assignments` FOR EACH ROW BEGIN
  INSERT INTO `study_annotator_counts` (`study_id`, `annotator_id`, `assigned`, `started`, `done`, `locked`) VALUES ((SELECT `study_id` FROM `cases` WHERE `id` = NEW.`case_id`), NEW.`annotator_id`, 1, 0, 0, 0) ON CONFLICT (`study_id`, `annotator_id`) DO UPDATE SET `assigned` = `assigned` + (1);
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = NEW.`case_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `assignments_counted_delete` AFTER DELETE ON `assignments` FOR EACH ROW BEGIN
  INSERT INTO `study_annotator_counts` (`study_id`, `annotator_id`, `assigned`, `started`, `done`, `locked`) VALUES ((SELECT `study_id` FROM `cases` WHERE `id` = OLD.`case_id`), OLD.`annotator_id`, -1, 0, 0, 0) ON CONFLICT (`study_id`, `annotator_id`) DO UPDATE SET `assigned` = `assigned` + (-1);
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = OLD.`case_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `assignments_counted_update` AFTER UPDATE OF `annotator_id`, `case_id` ON `assignments` FOR EACH ROW BEGIN
  INSERT INTO `study_annotator_counts` (`study_id`, `annotator_id`, `assigned`, `started`, `done`, `locked`) VALUES ((SELECT `study_id` FROM `cases` WHERE `id` = OLD.`case_id`), OLD.`annotator_id`, -1, 0, 0, 0) ON CONFLICT (`study_id`, `annotator_id`) DO UPDATE SET `assigned` = `assigned` + (-1);
  INSERT INTO `study_annotator_counts` (`study_id`, `annotator_id`, `assigned`, `started`, `done`, `locked`) VALUES ((SELECT `study_id` FROM `cases` WHERE `id` = NEW.`case_id`), NEW.`annotator_id`, 1, 0, 0, 0) ON CONFLICT (`study_id`, `annotator_id`) DO UPDATE SET `assigned` = `assigned` + (1);
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = OLD.`case_id`;
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = NEW.`case_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `annotations_counted_insert` AFTER INSERT ON `annotations` FOR EACH ROW BEGIN
  INSERT INTO `study_annotator_counts` (`study_id`, `annotator_id`, `assigned`, `started`, `done`, `locked`) VALUES ((SELECT `study_id` FROM `cases` WHERE `id` = NEW.`case_id`), NEW.`annotator_id`, 0, 1, (1) * (CASE WHEN NEW.`status` IN ('submitted', 'locked') THEN 1 ELSE 0 END), (1) * (CASE WHEN NEW.`status` = 'locked' THEN 1 ELSE 0 END)) ON CONFLICT (`study_id`, `annotator_id`) DO UPDATE SET `started` = `started` + (1), `done` = `done` + (1) * (CASE WHEN NEW.`status` IN ('submitted', 'locked') THEN 1 ELSE 0 END), `locked` = `locked` + (1) * (CASE WHEN NEW.`status` = 'locked' THEN 1 ELSE 0 END);
END;
--> statement-breakpoint
CREATE TRIGGER `annotations_counted_delete` AFTER DELETE ON `annotations` FOR EACH ROW BEGIN
  INSERT INTO `study_annotator_counts` (`study_id`, `annotator_id`, `assigned`, `started`, `done`, `locked`) VALUES ((SELECT `study_id` FROM `cases` WHERE `id` = OLD.`case_id`), OLD.`annotator_id`, 0, -1, (-1) * (CASE WHEN OLD.`status` IN ('submitted', 'locked') THEN 1 ELSE 0 END), (-1) * (CASE WHEN OLD.`status` = 'locked' THEN 1 ELSE 0 END)) ON CONFLICT (`study_id`, `annotator_id`) DO UPDATE SET `started` = `started` + (-1), `done` = `done` + (-1) * (CASE WHEN OLD.`status` IN ('submitted', 'locked') THEN 1 ELSE 0 END), `locked` = `locked` + (-1) * (CASE WHEN OLD.`status` = 'locked' THEN 1 ELSE 0 END);
END;
--> statement-breakpoint
CREATE TRIGGER `annotations_counted_update` AFTER UPDATE OF `status`, `annotator_id`, `case_id` ON `annotations` FOR EACH ROW WHEN OLD.`status` IS NOT NEW.`status` OR OLD.`annotator_id` IS NOT NEW.`annotator_id` OR OLD.`case_id` IS NOT NEW.`case_id` BEGIN
  INSERT INTO `study_annotator_counts` (`study_id`, `annotator_id`, `assigned`, `started`, `done`, `locked`) VALUES ((SELECT `study_id` FROM `cases` WHERE `id` = OLD.`case_id`), OLD.`annotator_id`, 0, -1, (-1) * (CASE WHEN OLD.`status` IN ('submitted', 'locked') THEN 1 ELSE 0 END), (-1) * (CASE WHEN OLD.`status` = 'locked' THEN 1 ELSE 0 END)) ON CONFLICT (`study_id`, `annotator_id`) DO UPDATE SET `started` = `started` + (-1), `done` = `done` + (-1) * (CASE WHEN OLD.`status` IN ('submitted', 'locked') THEN 1 ELSE 0 END), `locked` = `locked` + (-1) * (CASE WHEN OLD.`status` = 'locked' THEN 1 ELSE 0 END);
  INSERT INTO `study_annotator_counts` (`study_id`, `annotator_id`, `assigned`, `started`, `done`, `locked`) VALUES ((SELECT `study_id` FROM `cases` WHERE `id` = NEW.`case_id`), NEW.`annotator_id`, 0, 1, (1) * (CASE WHEN NEW.`status` IN ('submitted', 'locked') THEN 1 ELSE 0 END), (1) * (CASE WHEN NEW.`status` = 'locked' THEN 1 ELSE 0 END)) ON CONFLICT (`study_id`, `annotator_id`) DO UPDATE SET `started` = `started` + (1), `done` = `done` + (1) * (CASE WHEN NEW.`status` IN ('submitted', 'locked') THEN 1 ELSE 0 END), `locked` = `locked` + (1) * (CASE WHEN NEW.`status` = 'locked' THEN 1 ELSE 0 END);
END;
--> statement-breakpoint
CREATE TRIGGER `cases_progress_insert` AFTER INSERT ON `cases` FOR EACH ROW BEGIN
  INSERT INTO `study_progress_counts` (`study_id`, `state`, `n`) VALUES (NEW.`study_id`, NEW.`progress_state`, 1) ON CONFLICT (`study_id`, `state`) DO UPDATE SET `n` = `n` + (1);
END;
--> statement-breakpoint
CREATE TRIGGER `cases_progress_update` AFTER UPDATE OF `progress_state`, `study_id` ON `cases` FOR EACH ROW WHEN OLD.`progress_state` IS NOT NEW.`progress_state` OR OLD.`study_id` IS NOT NEW.`study_id` BEGIN
  INSERT INTO `study_progress_counts` (`study_id`, `state`, `n`) VALUES (OLD.`study_id`, OLD.`progress_state`, -1) ON CONFLICT (`study_id`, `state`) DO UPDATE SET `n` = `n` + (-1);
  INSERT INTO `study_progress_counts` (`study_id`, `state`, `n`) VALUES (NEW.`study_id`, NEW.`progress_state`, 1) ON CONFLICT (`study_id`, `state`) DO UPDATE SET `n` = `n` + (1);
END;
--> statement-breakpoint
CREATE TRIGGER `cases_progress_delete` AFTER DELETE ON `cases` FOR EACH ROW BEGIN
  INSERT INTO `study_progress_counts` (`study_id`, `state`, `n`) VALUES (OLD.`study_id`, OLD.`progress_state`, -1) ON CONFLICT (`study_id`, `state`) DO UPDATE SET `n` = `n` + (-1);
END;
--> statement-breakpoint
CREATE TRIGGER `case_outcomes_progress_insert` AFTER INSERT ON `case_outcomes` FOR EACH ROW BEGIN
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = NEW.`case_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `case_outcomes_progress_delete` AFTER DELETE ON `case_outcomes` FOR EACH ROW BEGIN
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = OLD.`case_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `case_outcomes_progress_update` AFTER UPDATE OF `status`, `case_id` ON `case_outcomes` FOR EACH ROW BEGIN
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = OLD.`case_id`;
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = NEW.`case_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `reference_labels_progress_insert` AFTER INSERT ON `reference_labels` FOR EACH ROW BEGIN
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = NEW.`case_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `reference_labels_progress_delete` AFTER DELETE ON `reference_labels` FOR EACH ROW BEGIN
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = OLD.`case_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `reference_labels_progress_update` AFTER UPDATE OF `diagnosis_sufficiency`, `case_id` ON `reference_labels` FOR EACH ROW BEGIN
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = OLD.`case_id`;
  UPDATE `cases` SET `progress_state` = coalesce((SELECT `status` FROM `case_outcomes` WHERE `case_id` = `cases`.`id`), CASE WHEN EXISTS (SELECT 1 FROM `reference_labels` WHERE `case_id` = `cases`.`id` AND `diagnosis_sufficiency` IS NOT NULL) THEN 'reference' WHEN (SELECT count(*) FROM `assignments` WHERE `case_id` = `cases`.`id`) >= 2 THEN 'in_annotation' ELSE 'unassigned' END) WHERE `id` = NEW.`case_id`;
END;
