"""The append-only history read back: a memory's state at a time and its rollback
(``timetravel``), and the history rows an import must bring (``imports``). The pure rules are
``strata_recall.domain.timetravel_rules``; the rows themselves are written with every change
(``strata_recall.domain.lifecycle.history_row``) and purged only by ``strata_recall.retention``."""
