"""A Python client for a Strata server, with the facade's methods and results.

    from strata_recall.client import StrataClient

    with StrataClient("http://127.0.0.1:8420", token="...") as strata:
        strata.remember("The user prefers tea.", scope={"user": "alice"})
        print(strata.recall("drinks", scope={"user": "alice"}).context)

``AsyncStrataClient`` is the same for async code. Errors are the ``strata_recall.errors`` classes
(``NotFound``, ``VersionConflict``, ...), plus ``TransportError`` when the server cannot be
reached and ``HTTPError`` for an answer the client cannot map.
"""

from strata_recall.client._clients import AsyncStrataClient, StrataClient

__all__ = ["AsyncStrataClient", "StrataClient"]
