CREATE TABLE `calibration_cases` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`study_id` integer NOT NULL,
	`case_id` integer NOT NULL,
	`purpose` text NOT NULL,
	`reference` text NOT NULL,
	`rationale` text DEFAULT '' NOT NULL,
	`source` text NOT NULL,
	`created_at` integer NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `calibration_cases_study_case_idx` ON `calibration_cases` (`study_id`,`case_id`);--> statement-breakpoint
CREATE TABLE `quality_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`item_key` text NOT NULL,
	`study_id` integer NOT NULL,
	`annotator_id` text NOT NULL,
	`case_id` integer NOT NULL,
	`kind` text NOT NULL,
	`first_annotation_id` integer,
	`calibration_id` integer,
	`sort_key` real NOT NULL,
	`created_at` integer NOT NULL,
	`status` text,
	`sufficiency` text,
	`icd10` text,
	`earliest_section` integer,
	`missing_info` text DEFAULT '[]' NOT NULL,
	`missing_other` text DEFAULT '' NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	`updated_at` integer,
	`submitted_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `quality_items_item_key_unique` ON `quality_items` (`item_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `quality_items_unique_idx` ON `quality_items` (`study_id`,`annotator_id`,`case_id`,`kind`);--> statement-breakpoint
CREATE INDEX `quality_items_annotator_idx` ON `quality_items` (`annotator_id`);--> statement-breakpoint
CREATE TABLE `study_quality_settings` (
	`study_id` integer PRIMARY KEY NOT NULL,
	`retest_fraction` real DEFAULT 0 NOT NULL,
	`washout_cases` integer DEFAULT 0 NOT NULL,
	`washout_days` integer DEFAULT 0 NOT NULL,
	`seed` integer DEFAULT 1 NOT NULL,
	`calibration_rate` real DEFAULT 0 NOT NULL,
	`training` integer DEFAULT false NOT NULL,
	`accuracy_threshold` real,
	`updated_at` integer NOT NULL,
	`updated_by` text
);
--> statement-breakpoint
ALTER TABLE `assignments` ADD `item_key` text;--> statement-breakpoint
UPDATE `assignments` SET `item_key` = 'k' || lower(hex(randomblob(6))) WHERE `item_key` IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `assignments_item_key_unique` ON `assignments` (`item_key`);