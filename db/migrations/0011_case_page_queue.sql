DROP INDEX `quality_items_annotator_idx`;--> statement-breakpoint
CREATE INDEX `quality_items_queue_idx` ON `quality_items` (`annotator_id`,`study_id`,`sort_key`,`kind`,`status`);--> statement-breakpoint
CREATE INDEX `annotations_annotator_status_idx` ON `annotations` (`annotator_id`,`status`);