CREATE TABLE `guideline_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`scope` text NOT NULL,
	`scope_id` integer NOT NULL,
	`version` integer NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `guideline_versions_scope_idx` ON `guideline_versions` (`scope`,`scope_id`,`version`);--> statement-breakpoint
ALTER TABLE `screening_studies` ADD `inclusion_criterion` text DEFAULT '' NOT NULL;