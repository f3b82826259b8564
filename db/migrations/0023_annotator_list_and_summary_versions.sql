CREATE TABLE `study_summary_versions` (
	`study_id` integer PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE `assignments` ADD `position` integer;--> statement-breakpoint
ALTER TABLE `assignments` ADD `work_state` text DEFAULT 'not_started' NOT NULL;--> statement-breakpoint
CREATE INDEX `assignments_annotator_study_pos_idx` ON `assignments` (`annotator_id`,`study_id`,`position`,`case_id`);--> statement-breakpoint
CREATE INDEX `assignments_annotator_study_state_pos_idx` ON `assignments` (`annotator_id`,`study_id`,`work_state`,`position`,`case_id`);--> statement-breakpoint
CREATE INDEX `assignments_open_pos_idx` ON `assignments` (`annotator_id`,`study_id`,`position`,`case_id`) WHERE "assignments"."work_state" in ('not_started', 'draft');--> statement-breakpoint
-- Kept by the database (docs/architecture.md, "Pages are windows"): each assignment's case position and work state,
-- so that the annotator's list, its filters and its next open case are index ranges; and each study's summary
-- version, which moves whenever its time on task may have changed (docs/statistics.md, "Time on task").
-- Backfill first, then the triggers that keep them whatever code writes.
UPDATE `assignments` SET `position` = (SELECT `position` FROM `cases` WHERE `id` = `assignments`.`case_id`), `work_state` = coalesce((SELECT `status` FROM `annotations` WHERE `assignment_id` = `assignments`.`id`), 'not_started');
--> statement-breakpoint
CREATE TRIGGER `assignments_position` AFTER INSERT ON `assignments` FOR EACH ROW BEGIN
  UPDATE `assignments` SET `position` = (SELECT `position` FROM `cases` WHERE `id` = NEW.`case_id`), `work_state` = coalesce((SELECT `status` FROM `annotations` WHERE `assignment_id` = NEW.`id`), 'not_started') WHERE `id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `assignments_position_case` AFTER UPDATE OF `case_id` ON `assignments` FOR EACH ROW WHEN OLD.`case_id` IS NOT NEW.`case_id` BEGIN
  UPDATE `assignments` SET `position` = (SELECT `position` FROM `cases` WHERE `id` = NEW.`case_id`) WHERE `id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `cases_position_assignments` AFTER UPDATE OF `position` ON `cases` FOR EACH ROW WHEN OLD.`position` IS NOT NEW.`position` BEGIN
  UPDATE `assignments` SET `position` = NEW.`position` WHERE `case_id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `annotations_work_state_insert` AFTER INSERT ON `annotations` FOR EACH ROW BEGIN
  UPDATE `assignments` SET `work_state` = NEW.`status` WHERE `id` = NEW.`assignment_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `annotations_work_state_update` AFTER UPDATE OF `status`, `assignment_id` ON `annotations` FOR EACH ROW WHEN OLD.`status` IS NOT NEW.`status` OR OLD.`assignment_id` IS NOT NEW.`assignment_id` BEGIN
  UPDATE `assignments` SET `work_state` = 'not_started' WHERE `id` = OLD.`assignment_id` AND OLD.`assignment_id` IS NOT NEW.`assignment_id`;
  UPDATE `assignments` SET `work_state` = NEW.`status` WHERE `id` = NEW.`assignment_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `annotations_work_state_delete` AFTER DELETE ON `annotations` FOR EACH ROW BEGIN
  UPDATE `assignments` SET `work_state` = 'not_started' WHERE `id` = OLD.`assignment_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `annotations_summary_insert` AFTER INSERT ON `annotations` FOR EACH ROW WHEN NEW.`status` IN ('submitted', 'locked') BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = NEW.`case_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `annotations_summary_update` AFTER UPDATE OF `status`, `case_id`, `annotator_id` ON `annotations` FOR EACH ROW WHEN (OLD.`status` IN ('submitted', 'locked') OR NEW.`status` IN ('submitted', 'locked')) AND (OLD.`status` IS NOT NEW.`status` OR OLD.`case_id` IS NOT NEW.`case_id` OR OLD.`annotator_id` IS NOT NEW.`annotator_id`) BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = OLD.`case_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = NEW.`case_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `annotations_summary_delete` AFTER DELETE ON `annotations` FOR EACH ROW WHEN OLD.`status` IN ('submitted', 'locked') BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = OLD.`case_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `adjudications_summary_insert` AFTER INSERT ON `adjudications` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = NEW.`case_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `adjudications_summary_update` AFTER UPDATE OF `status`, `case_id`, `adjudicator_id` ON `adjudications` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = OLD.`case_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = NEW.`case_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `adjudications_summary_delete` AFTER DELETE ON `adjudications` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = OLD.`case_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `work_time_summary_insert` AFTER INSERT ON `work_time` FOR EACH ROW WHEN (NEW.`entity` = 'annotation' AND EXISTS (SELECT 1 FROM `annotations` WHERE `case_id` = NEW.`item_id` AND `annotator_id` = NEW.`user_id` AND `status` IN ('submitted', 'locked'))) OR (NEW.`entity` = 'adjudication' AND EXISTS (SELECT 1 FROM `adjudications` WHERE `case_id` = NEW.`item_id` AND `adjudicator_id` = NEW.`user_id` AND `status` IN ('decided', 'reopened'))) BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = NEW.`item_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `work_time_summary_update` AFTER UPDATE ON `work_time` FOR EACH ROW WHEN (NEW.`entity` = 'annotation' AND EXISTS (SELECT 1 FROM `annotations` WHERE `case_id` = NEW.`item_id` AND `annotator_id` = NEW.`user_id` AND `status` IN ('submitted', 'locked'))) OR (NEW.`entity` = 'adjudication' AND EXISTS (SELECT 1 FROM `adjudications` WHERE `case_id` = NEW.`item_id` AND `adjudicator_id` = NEW.`user_id` AND `status` IN ('decided', 'reopened'))) OR OLD.`item_id` IS NOT NEW.`item_id` OR OLD.`user_id` IS NOT NEW.`user_id` OR OLD.`entity` IS NOT NEW.`entity` BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = NEW.`item_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `work_time_summary_delete` AFTER DELETE ON `work_time` FOR EACH ROW WHEN OLD.`entity` IN ('annotation', 'adjudication') BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = OLD.`item_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `users_summary_rename` AFTER UPDATE OF `username` ON `users` FOR EACH ROW WHEN OLD.`username` IS NOT NEW.`username` BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `id`, 1 FROM `studies` WHERE true ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `import_runs_summary_delete` AFTER DELETE ON `import_runs` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `id`, 1 FROM `studies` WHERE true ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
