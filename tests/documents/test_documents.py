"""Documents through the facade on a real SQLite store: cited chunks, no junk facts,
versioned re-ingest without duplicates, the folder watch through the job queue."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from strata_recall.documents.watch import FolderWatch
from strata_recall.domain.models import Filters, HistoryKind, Scope
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

ALICE = Scope(user="alice")
V1 = """# Deploy guide

## Build

Run `make build` to produce the wheel.

```console
$ make build
```

## Release

Tag the commit, then push the tag. The pipeline publishes the wheel.

## Rollback

Revert the tag.
"""
V2 = V1.replace("Tag the commit, then push the tag.", "Sign the tag, then push it.").replace(
    "## Rollback\n\nRevert the tag.\n", "## Support\n\nAsk in the channel.\n")


@pytest.fixture
def strata(tmp_path: Path) -> Iterator[Strata]:
    with Strata.open(tmp_path / "store", embedder=HashingEmbedder(),
                     embedded_worker=False) as opened:
        yield opened


def live(strata: Strata, source: str) -> list[str]:
    doc = strata.documents.stored(strata.documents.read(
        "x", path=None, source=source, title=None, format=None).document_id, ALICE)
    return [m.content for m in doc]


def test_every_chunk_is_an_event_and_a_cited_memory_with_no_facts(strata: Strata) -> None:
    result = strata.remember_document(V1, source="guides/deploy.md", scope=ALICE)
    assert (result.added, result.title) == (3, "Deploy guide")
    memories = [strata.get(i, scope=ALICE) for i in result.memory_ids]
    build = memories[0]
    cited = build.meta["document"]
    assert cited["source"] == "guides/deploy.md"
    assert cited["heading_path"] == ["Deploy guide", "Build"]
    assert cited["lines"] == [5, 9] and cited["chunk"] == 0 and cited["chunks"] == 3
    assert build.content.startswith("Deploy guide › Build\n\n")
    assert "kind:document" in build.tags
    [event] = strata.evidence(build.id, scope=ALICE)
    assert event.text == build.content and event.meta["document"] == cited
    strata.work()
    everything = strata.list(scope=ALICE, limit=100).items
    assert {m.id for m in everything} == set(result.memory_ids)  # no extracted "facts"
    assert strata.jobs() == []


def test_recall_returns_the_chunk_with_its_citation(strata: Strata) -> None:
    strata.remember_document(V1, source="guides/deploy.md", scope=ALICE)
    hit = strata.recall("how is the wheel published after tagging", scope=ALICE, k=1).hits[0]
    assert "push the tag" in hit.memory.content
    assert "make build" not in hit.memory.content  # the chunk, not the whole file
    assert hit.memory.meta["document"]["heading_path"] == ["Deploy guide", "Release"]


def test_reingest_versions_changed_chunks_keeps_the_rest_and_retires_removed(
    strata: Strata,
) -> None:
    first = strata.remember_document(V1, source="guides/deploy.md", scope=ALICE)
    again = strata.remember_document(V1, source="guides/deploy.md", scope=ALICE)
    assert (again.added, again.updated, again.unchanged, again.retired) == (0, 0, 3, 0)
    assert again.memory_ids == first.memory_ids and again.event_ids == ()

    second = strata.remember_document(V2, source="guides/deploy.md", scope=ALICE)
    assert (second.added, second.updated, second.unchanged, second.retired) == (1, 1, 1, 1)
    build, release, rollback = first.memory_ids
    assert second.memory_ids[:2] == (build, release)
    assert strata.get(build, scope=ALICE).version == 1
    changed = strata.get(release, scope=ALICE)
    assert changed.version == 2 and "Sign the tag" in changed.content
    assert [h.kind for h in strata.history(release, scope=ALICE)] == [
        HistoryKind.ADD, HistoryKind.UPDATE]
    assert strata.get(rollback, scope=ALICE, include_deleted=True).is_deleted
    contents = live(strata, "guides/deploy.md")
    assert len(contents) == len(set(contents)) == 3
    assert not any("Revert the tag" in c for c in contents)
    again = strata.remember_document(V2, source="guides/deploy.md", scope=ALICE)
    assert (again.added, again.updated, again.retired) == (0, 0, 0)
    hits = strata.recall("sign the tag", scope=ALICE, k=10).hits
    assert len({h.memory.id for h in hits}) == len(hits)
    assert sum("Sign the tag" in h.memory.content for h in hits) == 1


def test_forget_document_retires_every_chunk(strata: Strata) -> None:
    result = strata.remember_document(V1, source="guides/deploy.md", scope=ALICE)
    gone = strata.forget_document("guides/deploy.md", scope=ALICE)
    assert gone.retired == 3
    filters = Filters(tags_all=("kind:document",))
    assert strata.list(scope=ALICE, filters=filters).items == ()
    assert all(strata.get(i, scope=ALICE, include_deleted=True).is_deleted
               for i in result.memory_ids)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding ``deploy.md`` (V1)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text(V1, encoding="utf-8")
    return notes


def test_a_watched_folder_turns_add_change_delete_into_jobs(
    strata: Strata, folder: Path,
) -> None:
    (folder / "ignored.bin").write_bytes(b"\x00\x01")
    watch = FolderWatch(strata.documents, folder, ALICE)
    assert [c.change for c in watch.poll()] == ["added"]
    assert strata.work() == 1
    source = str((folder / "deploy.md").resolve())
    assert len(live(strata, source)) == 3
    assert watch.poll() == []  # nothing changed: no job

    (folder / "deploy.md").write_text(V2, encoding="utf-8")
    (folder / "extra.txt").write_text("Plain notes about the office wifi.", encoding="utf-8")
    assert sorted(c.change for c in watch.poll()) == ["added", "changed"]
    assert strata.work() == 2
    assert any("Sign the tag" in c for c in live(strata, source))
    assert strata.recall("office wifi", scope=ALICE, k=1).hits[0].memory.meta[
        "document"]["title"] == "extra.txt"

    (folder / "deploy.md").unlink()
    assert [c.change for c in watch.poll()] == ["removed"]
    assert strata.work() == 1
    assert live(strata, source) == []


def test_a_new_watch_catches_up_deletions_made_while_nobody_watched(
    strata: Strata, folder: Path,
) -> None:
    strata.remember_document(path=folder / "deploy.md", scope=ALICE)
    (folder / "deploy.md").unlink()
    assert [c.change for c in FolderWatch(strata.documents, folder, ALICE).poll()] == [
        "removed"]
    strata.work()
    assert live(strata, str((folder / "deploy.md").resolve())) == []


def test_watch_documents_polls_until_stopped(strata: Strata, folder: Path) -> None:
    stop = threading.Event()
    seen: list[str] = []
    watcher = threading.Thread(target=strata.watch_documents, args=(folder,), kwargs={
        "scope": ALICE, "interval_s": 0.05, "stop": stop,
        "report": lambda change: seen.append(change.change)})
    watcher.start()
    deadline = time.monotonic() + 30
    while not seen and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    watcher.join(timeout=30)
    assert not watcher.is_alive() and seen == ["added"]
    assert strata.work() == 1
    assert len(live(strata, str((folder / "deploy.md").resolve()))) == 3


def tiny_pdf(pages: list[list[str]]) -> bytes:
    """A minimal valid PDF with these lines of text on its pages (Helvetica)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>",
               f"<< /Type /Pages /Kids [{' '.join(f'{4 + 2 * i} 0 R' for i in range(len(pages)))}]"
               f" /Count {len(pages)} >>",
               "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, lines in enumerate(pages):
        stream = "BT /F1 12 Tf 72 720 Td " + " ".join(f"({line}) Tj 0 -16 Td" for line in lines)
        stream += " ET"
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents "
                       f"{5 + 2 * i} 0 R /Resources << /Font << /F1 3 0 R >> >> >>")
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n"
            "%%EOF\n").encode()
    return out


def test_a_pdf_is_read_page_by_page(strata: Strata, tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(tiny_pdf([["Installing the pump.", "Open the valve first."],
                              ["Cleaning the filter.", "Rinse it weekly."]]))
    result = strata.remember_document(path=pdf, scope=ALICE)
    assert (result.title, len(result.memory_ids)) == ("manual.pdf", 2)
    hit = strata.recall("how often is the filter rinsed", scope=ALICE, k=1).hits[0]
    assert "Rinse it weekly" in hit.memory.content
    assert hit.memory.meta["document"]["heading_path"] == ["Page 2"]
