"""Documents as memories: structure-aware chunks with citations, versioned re-ingest, and a
watched folder (see ``service`` and ``watch``)."""

from strata.documents.service import Documents
from strata.documents.watch import FolderChange, FolderWatch

__all__ = ["Documents", "FolderChange", "FolderWatch"]
