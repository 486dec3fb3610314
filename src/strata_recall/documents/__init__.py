"""Documents as memories: structure-aware chunks with citations, versioned re-ingest, and a
watched folder (see ``service`` and ``watch``)."""

from strata_recall.documents.service import Documents
from strata_recall.documents.watch import FolderChange, FolderWatch

__all__ = ["Documents", "FolderChange", "FolderWatch"]
