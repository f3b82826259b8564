CREATE TABLE `screening_round_versions` (
	`round_id` integer PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
-- Hand-written: the round figures are kept until their round's version moves (docs/screening.md, "Round figures at
-- scale"; app/screening/round-figures.server.ts:roundFiguresKept). Every write that may change them moves it, in the
-- writing transaction, whatever code writes: a vote written, changed or deleted; an item added to or removed from
-- the round; the round's row changed (closed) or deleted.
CREATE TRIGGER `screening_votes_round_version_insert` AFTER INSERT ON `screening_votes` FOR EACH ROW BEGIN
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (NEW.`round_id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `screening_votes_round_version_update` AFTER UPDATE ON `screening_votes` FOR EACH ROW BEGIN
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (OLD.`round_id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (NEW.`round_id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `screening_votes_round_version_delete` AFTER DELETE ON `screening_votes` FOR EACH ROW BEGIN
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (OLD.`round_id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `screening_round_items_round_version_insert` AFTER INSERT ON `screening_round_items` FOR EACH ROW BEGIN
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (NEW.`round_id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `screening_round_items_round_version_update` AFTER UPDATE ON `screening_round_items` FOR EACH ROW BEGIN
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (OLD.`round_id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (NEW.`round_id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `screening_round_items_round_version_delete` AFTER DELETE ON `screening_round_items` FOR EACH ROW BEGIN
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (OLD.`round_id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `screening_rounds_round_version_update` AFTER UPDATE ON `screening_rounds` FOR EACH ROW BEGIN
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (NEW.`id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `screening_rounds_round_version_delete` AFTER DELETE ON `screening_rounds` FOR EACH ROW BEGIN
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (OLD.`id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `screening_reviewers_round_version_insert` AFTER INSERT ON `screening_reviewers` FOR EACH ROW BEGIN
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (NEW.`round_id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `screening_reviewers_round_version_delete` AFTER DELETE ON `screening_reviewers` FOR EACH ROW BEGIN
  INSERT INTO `screening_round_versions` (`round_id`, `version`) VALUES (OLD.`round_id`, 1) ON CONFLICT (`round_id`) DO UPDATE SET `version` = `version` + 1;
END;
