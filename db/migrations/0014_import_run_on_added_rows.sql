ALTER TABLE `judge_response_imports` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `judge_response_imports_run_idx` ON `judge_response_imports` (`import_run`);--> statement-breakpoint
ALTER TABLE `judge_responses` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `judge_responses_run_idx` ON `judge_responses` (`import_run`);--> statement-breakpoint
ALTER TABLE `mentat_ratings` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `mentat_ratings_run_idx` ON `mentat_ratings` (`import_run`);--> statement-breakpoint
ALTER TABLE `grading_verdicts` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `grading_verdicts_run_idx` ON `grading_verdicts` (`import_run`);