"""Layered meta retrieval of [000] chunks 11-15, pure: meta items and refs (``items``), the
situation profile and meta budget (``situation``), backbone, focus band, mode blend and the
meta pack (``selection``), and the layered prompt of [002] (``prompt``)."""
