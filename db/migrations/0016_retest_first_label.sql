ALTER TABLE `quality_items` ADD `first_label` text;--> statement-breakpoint
ALTER TABLE `quality_items` ADD `first_submitted_at` integer;--> statement-breakpoint
ALTER TABLE `quality_items` ADD `paired_case_id` integer;--> statement-breakpoint
CREATE INDEX `quality_items_paired_case_idx` ON `quality_items` (`paired_case_id`);