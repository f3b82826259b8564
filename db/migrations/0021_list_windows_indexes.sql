CREATE INDEX `judge_items_set_pos_idx` ON `judge_items` (`set_id`,`position`);--> statement-breakpoint
CREATE INDEX `judge_items_set_bucket_pos_idx` ON `judge_items` (`set_id`,`bucket`,`position`);