CREATE TABLE `prep_corrections` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`note_id` integer NOT NULL,
	`key` text NOT NULL,
	`status` text DEFAULT 'not_started' NOT NULL,
	`texts` text DEFAULT '{}' NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	`updated_by` text,
	`updated_at` integer,
	`submitted_at` integer,
	FOREIGN KEY (`note_id`) REFERENCES `prep_notes`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`updated_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `prep_corrections_note_idx` ON `prep_corrections` (`note_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `prep_corrections_key_idx` ON `prep_corrections` (`key`);--> statement-breakpoint
-- Hand-written: a note enters the correction queue when its quality row says it needs correction, with an opaque
-- random key (docs/preparation.md, "Correction"); a row already there (drafts, a submission) is kept. NOT EXISTS
-- rather than INSERT OR IGNORE: an upsert's own conflict clause overrides a trigger's, so OR IGNORE would fail there.
CREATE TRIGGER `prep_corrections_on_quality_insert` AFTER INSERT ON `prep_note_quality`
WHEN NEW.`needs_correction` = 1
BEGIN
	INSERT INTO `prep_corrections` (`note_id`, `key`) SELECT NEW.`note_id`, lower(hex(randomblob(6)))
	WHERE NOT EXISTS (SELECT 1 FROM `prep_corrections` WHERE `note_id` = NEW.`note_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `prep_corrections_on_quality_update` AFTER UPDATE OF `needs_correction` ON `prep_note_quality`
WHEN NEW.`needs_correction` = 1
BEGIN
	INSERT INTO `prep_corrections` (`note_id`, `key`) SELECT NEW.`note_id`, lower(hex(randomblob(6)))
	WHERE NOT EXISTS (SELECT 1 FROM `prep_corrections` WHERE `note_id` = NEW.`note_id`);
END;
--> statement-breakpoint
INSERT OR IGNORE INTO `prep_corrections` (`note_id`, `key`)
	SELECT `note_id`, lower(hex(randomblob(6))) FROM `prep_note_quality` WHERE `needs_correction` = 1;
