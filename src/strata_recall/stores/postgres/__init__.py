"""The PostgreSQL + pgvector store, for many stateless processes sharing one database."""

from strata_recall.stores.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
