ALTER TABLE `screening_items` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `screening_items_import_run_idx` ON `screening_items` (`import_run`);--> statement-breakpoint
ALTER TABLE `screening_labels` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `screening_labels_import_run_idx` ON `screening_labels` (`import_run`);--> statement-breakpoint
ALTER TABLE `screening_recall_tiers` ADD `import_run` text;--> statement-breakpoint
CREATE INDEX `screening_recall_tiers_import_run_idx` ON `screening_recall_tiers` (`import_run`);