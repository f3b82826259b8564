ALTER TABLE `assignments` ADD `queue_study_id` integer;--> statement-breakpoint
ALTER TABLE `assignments` ADD `queue_position` integer;--> statement-breakpoint
ALTER TABLE `assignments` ADD `queue_open` integer DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX `assignments_queue_idx` ON `assignments` (`annotator_id`,`queue_study_id`,`queue_position`);--> statement-breakpoint
CREATE INDEX `assignments_queue_open_idx` ON `assignments` (`annotator_id`,`queue_study_id`,`queue_position`) WHERE queue_open = 1;--> statement-breakpoint
-- The annotator's queue (docs/architecture.md, "The annotator's queue"): each assignment carries its case's study and
-- position and whether its annotation is still open, kept here by triggers whoever writes, so "next open case",
-- "previous case" and the progress count are index lookups instead of a sort of every assignment. An assignment has
-- at most one annotation, and none means open; so a first draft changes nothing, and only a status change writes.
UPDATE `assignments` SET
  `queue_study_id` = (SELECT `study_id` FROM `cases` WHERE `cases`.`id` = `assignments`.`case_id`),
  `queue_position` = (SELECT `position` FROM `cases` WHERE `cases`.`id` = `assignments`.`case_id`),
  `queue_open` = NOT EXISTS (
    SELECT 1 FROM `annotations` WHERE `annotations`.`assignment_id` = `assignments`.`id`
      AND `annotations`.`status` IN ('submitted', 'locked'));--> statement-breakpoint
CREATE TRIGGER `assignments_queue_insert` AFTER INSERT ON `assignments` BEGIN
  UPDATE `assignments` SET
    `queue_study_id` = (SELECT `study_id` FROM `cases` WHERE `id` = NEW.`case_id`),
    `queue_position` = (SELECT `position` FROM `cases` WHERE `id` = NEW.`case_id`),
    `queue_open` = NOT EXISTS (
      SELECT 1 FROM `annotations` WHERE `assignment_id` = NEW.`id` AND `status` IN ('submitted', 'locked'))
  WHERE `id` = NEW.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `assignments_queue_case` AFTER UPDATE OF `case_id` ON `assignments` BEGIN
  UPDATE `assignments` SET
    `queue_study_id` = (SELECT `study_id` FROM `cases` WHERE `id` = NEW.`case_id`),
    `queue_position` = (SELECT `position` FROM `cases` WHERE `id` = NEW.`case_id`)
  WHERE `id` = NEW.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `cases_queue_position` AFTER UPDATE OF `study_id`, `position` ON `cases` BEGIN
  UPDATE `assignments` SET `queue_study_id` = NEW.`study_id`, `queue_position` = NEW.`position`
  WHERE `case_id` = NEW.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `annotations_queue_insert` AFTER INSERT ON `annotations`
WHEN NEW.`status` IN ('submitted', 'locked') BEGIN
  UPDATE `assignments` SET `queue_open` = 0 WHERE `id` = NEW.`assignment_id`;
END;--> statement-breakpoint
CREATE TRIGGER `annotations_queue_update` AFTER UPDATE OF `status`, `assignment_id` ON `annotations`
WHEN OLD.`status` IS NOT NEW.`status` OR OLD.`assignment_id` IS NOT NEW.`assignment_id` BEGIN
  UPDATE `assignments` SET `queue_open` = 1 WHERE `id` = OLD.`assignment_id` AND OLD.`assignment_id` <> NEW.`assignment_id`;
  UPDATE `assignments` SET `queue_open` = NEW.`status` NOT IN ('submitted', 'locked') WHERE `id` = NEW.`assignment_id`;
END;--> statement-breakpoint
CREATE TRIGGER `annotations_queue_delete` AFTER DELETE ON `annotations` BEGIN
  UPDATE `assignments` SET `queue_open` = 1 WHERE `id` = OLD.`assignment_id`;
END;
