-- Custom SQL migration file, put your code below! --
-- The statistics page is kept until its study's summary version moves (docs/statistics.md, "The page at scale";
-- app/study-report/study-report.server.ts:getStatsPageOffThread). Besides the annotations, decisions and work time
-- of migration 0023, the page reads the cases' outcomes, their reference labels and the study's own row: these
-- triggers move the version when one of them changes outside an import (an import moves every study's version when
-- its run ends, migration 0023), and when a study is created or deleted, so that a reused id never finds a kept page.
CREATE TRIGGER `case_outcomes_summary_insert` AFTER INSERT ON `case_outcomes` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) VALUES (NEW.`study_id`, 1) ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `case_outcomes_summary_update` AFTER UPDATE ON `case_outcomes` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) VALUES (OLD.`study_id`, 1) ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
  INSERT INTO `study_summary_versions` (`study_id`, `version`) VALUES (NEW.`study_id`, 1) ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `case_outcomes_summary_delete` AFTER DELETE ON `case_outcomes` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) VALUES (OLD.`study_id`, 1) ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `reference_labels_summary_update` AFTER UPDATE ON `reference_labels` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = NEW.`case_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `reference_labels_summary_delete` AFTER DELETE ON `reference_labels` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) SELECT `study_id`, 1 FROM `cases` WHERE `id` = OLD.`case_id` ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `studies_summary_insert` AFTER INSERT ON `studies` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) VALUES (NEW.`id`, 1) ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `studies_summary_update` AFTER UPDATE OF `name` ON `studies` FOR EACH ROW WHEN OLD.`name` IS NOT NEW.`name` BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) VALUES (NEW.`id`, 1) ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `studies_summary_delete` AFTER DELETE ON `studies` FOR EACH ROW BEGIN
  INSERT INTO `study_summary_versions` (`study_id`, `version`) VALUES (OLD.`id`, 1) ON CONFLICT (`study_id`) DO UPDATE SET `version` = `version` + 1;
END;
