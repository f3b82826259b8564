CREATE TABLE `import_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`target` text NOT NULL,
	`pid` integer NOT NULL,
	`host` text NOT NULL,
	`started_at` integer NOT NULL,
	`heartbeat_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `cases` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `cases_import_run_idx` ON `cases` (`import_run`);--> statement-breakpoint
ALTER TABLE `events` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `events_import_run_idx` ON `events` (`import_run`);--> statement-breakpoint
ALTER TABLE `studies` ADD `import_run` text;