CREATE INDEX `case_outcomes_status_disputed_idx` ON `case_outcomes` (`status`,`disputed_at`);--> statement-breakpoint
CREATE INDEX `judge_items_set_pos_idx` ON `judge_items` (`set_id`,`position`);--> statement-breakpoint
CREATE INDEX `judge_items_set_bucket_pos_idx` ON `judge_items` (`set_id`,`bucket`,`position`);--> statement-breakpoint
CREATE INDEX `mentat_questions_bank_domain_pos_idx` ON `mentat_questions` (`bank_id`,`domain`,`position`);--> statement-breakpoint
CREATE INDEX `review_items_set_kind_pos_idx` ON `review_items` (`set_id`,`kind`,`position`);