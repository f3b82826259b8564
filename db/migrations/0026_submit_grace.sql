ALTER TABLE `annotations` ADD `locks_at` integer;--> statement-breakpoint
CREATE INDEX `annotations_locks_at_idx` ON `annotations` (`locks_at`) WHERE status = 'submitted' AND locks_at IS NOT NULL;--> statement-breakpoint
ALTER TABLE `quality_items` ADD `locks_at` integer;--> statement-breakpoint
CREATE INDEX `quality_items_locks_at_idx` ON `quality_items` (`locks_at`) WHERE status = 'submitted' AND locks_at IS NOT NULL;