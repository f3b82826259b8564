ALTER TABLE `mentat_questions` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `mentat_questions_import_run_idx` ON `mentat_questions` (`import_run`);--> statement-breakpoint
ALTER TABLE `review_items` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `review_items_import_run_idx` ON `review_items` (`import_run`);