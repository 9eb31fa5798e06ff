"""The store on every backend: migrations, idempotent analyses, the job queue's claims and leases,
tokens hashed at rest, and the content-addressed log store.

SQLite always; PostgreSQL too when IODIAG_TEST_POSTGRES_URL is set (``tests/pg_start.sh`` starts one).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from iodiag.core import host
from iodiag.store import BlobStore, BlobTooLarge, Database, migrate, tokens
from iodiag.store import analyses as repo
from iodiag.store import queue as jobs
from iodiag.store.models import Analysis, ApiToken, Base, Job
from iodiag.store.tokens import Principal
from tests.api.test_api_support import POSTGRES_URL, fresh_postgres_url

BACKENDS = [
    "sqlite",
    pytest.param(
        "postgresql",
        marks=pytest.mark.skipif(not POSTGRES_URL, reason="set IODIAG_TEST_POSTGRES_URL (tests/pg_start.sh)"),
    ),
]


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    url = fresh_postgres_url(POSTGRES_URL) if request.param == "postgresql" else f"sqlite:///{tmp_path / 't.db'}"
    database = Database(url)
    migrate.upgrade(database)
    yield database
    database.dispose()


def new(owner: str = "alice", sha: str = "a" * 64, **kw: object) -> repo.NewAnalysis:
    return repo.NewAnalysis(
        owner=owner, submitted_by=owner, sha256=sha, size_bytes=10, filename="x.darshan", source="upload", **kw
    )  # type: ignore[arg-type]


def sha(i: int) -> str:
    return f"{i:064x}"


def test_migrations_reach_head_and_match_the_models(db: Database) -> None:
    assert migrate.at_head(db) and migrate.current(db) == migrate.head()
    migrate.upgrade(db)  # idempotent
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    assert diff == []
    if db.is_sqlite:
        with db.engine.connect() as conn:
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1


def test_one_analysis_per_owner_and_content(db: Database) -> None:
    with db.write() as s:
        a = repo.create(s, new())
    with db.write() as s:
        assert repo.find_by_content(s, "alice", "a" * 64).id == a.id  # type: ignore[union-attr]
        assert repo.find_by_content(s, "bob", "a" * 64) is None
    with pytest.raises(IntegrityError), db.write() as s:
        repo.create(s, new())
    with db.write() as s:
        repo.create(s, new(owner="bob"))
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(Analysis)) == 2
        assert s.scalar(select(func.count()).select_from(Job)) == 2


def test_submission_statements_find_create_and_requeue(db: Database) -> None:
    with db.write_connection() as conn:
        aid = repo.insert_queued(conn, new())
    with db.write_connection() as conn:
        assert repo.find_content(conn, "alice", "a" * 64) == repo.Found(aid, "queued")
        assert repo.find_content(conn, "bob", "a" * 64) is None
    with pytest.raises(IntegrityError), db.write_connection() as conn:
        repo.insert_queued(conn, new())  # one analysis per owner and content
    with pytest.raises(RuntimeError), db.write_connection() as conn:
        repo.insert_queued(conn, new(owner="bob"))
        raise RuntimeError("rolled back")
    with db.write_connection() as conn:
        assert repo.find_content(conn, "bob", "a" * 64) is None  # nothing half-written
    with db.write() as s:
        job = jobs.claim(s, "me", 30)
        assert job is not None and jobs.fail(s, "me", job, "bad log", 0.1)
    with db.write_connection() as conn:
        repo.requeue_failed(conn, aid)
    with db.read() as s:
        row = s.get(Analysis, aid)
        assert row is not None and (row.status, row.error, row.attempts) == ("queued", None, 0)
        assert jobs.depth(s) == 1


def test_background_checkpoints_copy_the_log_into_the_database(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    database = Database(f"sqlite:///{path}", background_checkpoints=True)
    try:
        migrate.upgrade(database)
        with database.engine.connect() as conn:
            assert conn.execute(text("PRAGMA wal_autocheckpoint")).scalar() == 0
        before = path.stat().st_size
        with database.write() as s:
            for i in range(20):
                repo.create(s, new(sha=sha(i), job_id=str(i)))
                s.flush()
            s.execute(text("CREATE TABLE ballast (b BLOB)"))
            s.execute(text("INSERT INTO ballast VALUES (randomblob(2000000))"))
        deadline = time.monotonic() + 10
        while path.stat().st_size < before + 2_000_000 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert path.stat().st_size >= before + 2_000_000  # the rows left the WAL for the database file
    finally:
        database.dispose()
    with Database(f"sqlite:///{path}").engine.connect() as conn:
        assert conn.execute(text("PRAGMA wal_autocheckpoint")).scalar() == 1000  # others keep SQLite's default


def test_visibility_and_filters(db: Database) -> None:
    with db.write() as s:
        a = repo.create(s, new("alice", sha(1), job_id="7"))
        b = repo.create(s, new("bob", sha(2)))
        hooked = repo.create(s, repo.NewAnalysis("carol", "slurm", sha(3), 1, "h", "upload"))
    everyone = repo.ListFilters()
    with db.read() as s:

        def ids(who: Principal, f: repo.ListFilters = everyone) -> set[str]:
            return {r.id for r in repo.list_visible(s, who, f, 100, 0)[1]}

        assert ids(Principal("alice", "user", 1)) == {a.id}
        assert ids(Principal("x", "helpdesk", 2)) == {a.id, b.id, hooked.id}
        assert ids(Principal("slurm", "hook", 3)) == {hooked.id}
        assert ids(Principal("x", "admin", 4), repo.ListFilters(job_id="7")) == {a.id}
        assert repo.get_visible(s, b.id, Principal("alice", "user", 1)) is None
        total, page = repo.list_visible(s, Principal("x", "admin", 4), everyone, 2, 0)
        assert total == 3 and len(page) == 2


def _outcome() -> jobs.Outcome:
    return jobs.Outcome(
        exe="/bin/app",
        job_id="42",
        counts={"critical": 1, "ok": 2},
        findings=[("P08", "critical"), ("J01", "ok"), ("D03", "ok")],
        outputs={"json": zlib.compress(b'{"findings": []}')},
    )


def test_claim_progress_complete(db: Database) -> None:
    with db.write() as s:
        a = repo.create(s, new())
    with db.write() as s:
        job = jobs.claim(s, "me", 30)
    assert job is not None and job.analysis_id == a.id and job.attempts == 1
    with db.write() as s:
        assert jobs.claim(s, "other", 30) is None  # nothing else queued
        assert jobs.set_progress(s, "me", job, "analyzing", 0.5)
        assert not jobs.set_progress(s, "intruder", job, "analyzing", 0.6)
    with db.read() as s:
        row = s.get(Analysis, a.id)
        assert row is not None and (row.status, row.stage, row.progress) == ("running", "analyzing", 0.5)
    with db.write() as s:
        assert not jobs.complete(s, "intruder", job, _outcome(), 1.0)
        assert jobs.complete(s, "me", job, _outcome(), 1.0)
    with db.read() as s:
        row = s.get(Analysis, a.id)
        assert row is not None and (row.status, row.progress, row.max_severity) == ("done", 1.0, "critical")
        assert (row.n_critical, row.n_ok, row.job_id, row.exe) == (1, 2, "42", "/bin/app")
        assert jobs.depth(s) == 0 and s.scalar(select(func.count()).select_from(Job)) == 0
        assert repo.output(s, a.id, "json") == b'{"findings": []}'
        assert repo.output(s, a.id, "html") is None
    f = repo.ListFilters(code="P08")
    with db.read() as s:
        assert repo.list_visible(s, Principal("alice", "user", 1), f, 10, 0)[0] == 1
        assert repo.list_visible(s, Principal("alice", "user", 1), repo.ListFilters(severity="warning"), 10, 0)[0] == 0


def test_concurrent_claims_never_share_a_job(db: Database) -> None:
    n_jobs, n_claimers = 40, 8
    with db.write() as s:
        for i in range(n_jobs):
            repo.create(s, new(sha=sha(100 + i)))
    claimed: list[str] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def claimer(name: str) -> None:
        try:
            while True:
                with db.write() as s:
                    job = jobs.claim(s, name, 30)
                if job is None:
                    return
                with lock:
                    claimed.append(job.analysis_id)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(f"c{i}",)) for i in range(n_claimers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(claimed) == n_jobs and len(set(claimed)) == n_jobs


def test_expired_leases_are_requeued_then_failed(db: Database) -> None:
    with db.write() as s:
        a = repo.create(s, new())
    for attempt in (1, 2):
        with db.write() as s:
            job = jobs.claim(s, f"dead-{attempt}", 0.01)
        assert job is not None and job.attempts == attempt
        time.sleep(0.05)
        with db.write() as s:
            assert jobs.renew(s, "someone-else", 30) == 0
            assert jobs.reap(s, max_attempts=3) == 1
        with db.read() as s:
            row = s.get(Analysis, a.id)
            assert row is not None and row.status == "queued"
        with db.write() as s:
            # The dead worker's late result is refused: it no longer holds the job.
            assert not jobs.complete(s, f"dead-{attempt}", job, _outcome(), 1.0)
    with db.write() as s:
        job = jobs.claim(s, "dead-3", 0.01)
    time.sleep(0.05)
    with db.write() as s:
        assert jobs.reap(s, max_attempts=3) == 1
    with db.read() as s:
        row = s.get(Analysis, a.id)
        assert row is not None and row.status == "failed" and "interrupted 3 times" in (row.error or "")
        assert jobs.depth(s) == 0


def test_renewed_leases_are_kept_and_release_requeues(db: Database) -> None:
    with db.write() as s:
        repo.create(s, new())
    with db.write() as s:
        job = jobs.claim(s, "me", 0.2)
    assert job is not None
    for _ in range(3):
        time.sleep(0.1)
        with db.write() as s:
            assert jobs.renew(s, "me", 0.2) == 1
            assert jobs.reap(s, 3) == 0
    with db.write() as s:
        assert jobs.release(s, "me", job, count_attempt=False)
    with db.write() as s:
        again = jobs.claim(s, "me", 30)
    assert again is not None and again.attempts == 1  # a shutdown does not count as an attempt


def test_failed_analysis_can_be_retried_and_deleted(db: Database) -> None:
    with db.write() as s:
        a = repo.create(s, new())
    with db.write() as s:
        job = jobs.claim(s, "me", 30)
        assert job is not None
        assert jobs.fail(s, "me", job, "bad log", 0.1)
    with db.write() as s:
        row = s.get(Analysis, a.id)
        assert row is not None and row.status == "failed"
        repo.retry(s, row)
    with db.read() as s:
        assert jobs.depth(s) == 1
    with db.write() as s:
        row = s.get(Analysis, a.id)
        assert row is not None
        assert repo.remove(s, row) == "a" * 64  # no other analysis uses the log
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(Job)) == 0  # cascaded


def test_tokens_are_hashed_at_rest(db: Database) -> None:
    with db.write() as s:
        row, token = tokens.create(s, "alice", "helpdesk", "note")
    with db.read() as s:
        stored = s.scalars(select(ApiToken)).one()
        assert token not in (stored.token_hash, stored.prefix) and stored.token_hash == tokens.hash_token(token)
        found = tokens.authenticate(s, token)
        assert found is not None and found[0] == Principal("alice", "helpdesk", row.id)
        assert tokens.authenticate(s, token + "x") is None
    with db.write() as s:
        tokens.revoke(s, row.id)
    with db.read() as s:
        assert tokens.authenticate(s, token) is None
    with db.write() as s, pytest.raises(ValueError):
        tokens.create(s, "x", "root")


def test_blob_store_writes_atomically_and_once(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    with store.writer(limit=100) as w:
        w.write(b"hello")
        digest = w.finish()
        assert not store.exists(digest)  # nothing under a real name before the rename
        assert store.commit(w, digest)
    assert store.path(digest).read_bytes() == b"hello"
    with store.writer(limit=100) as w:
        w.write(b"hello")
        assert not store.commit(w, w.finish())  # same content: already stored
    with pytest.raises(BlobTooLarge), store.writer(limit=4) as w:
        w.write(b"hello")
    assert list(store.tmp.iterdir()) == []  # the refused upload left nothing
    stale = store.tmp / "crash.part"
    stale.write_bytes(b"half")
    assert store.sweep_tmp(older_than_s=0) == 1
    store.delete(digest)
    assert not store.exists(digest)


def test_a_dead_writers_partial_uploads_go_at_the_next_start_and_live_ones_stay(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    gone = subprocess.Popen(["true"])
    gone.wait()
    here, boot = host.hostname(), host.boot_id()
    dead = store.tmp / f"{here}~{boot}~{gone.pid}~abc.part"
    earlier_boot = store.tmp / f"{here}~00000000~{os.getpid()}~abd.part"
    elsewhere = store.tmp / f"other-node~{boot}~{gone.pid}~abe.part"  # a live writer on another host, maybe
    for p in (dead, earlier_boot, elsewhere):
        p.write_bytes(b"half an upload")
    with store.writer(limit=100) as live:
        live.write(b"still coming")
        assert live.path.name.startswith(f"{here}~{boot}~{os.getpid()}~")
        assert store.sweep_tmp() == 2  # fresh files, yet their writers are certainly gone
        assert sorted(store.tmp.iterdir()) == sorted([elsewhere, live.path])


def test_owners_take_turns_so_a_burst_never_buries_another_owners_log(db: Database) -> None:
    with db.write() as s:
        for i in range(6):
            repo.create(s, new(owner="mallory", sha=sha(300 + i)))
        victim = repo.create(s, new(owner="victim", sha=sha(400)))
        carol = repo.create(s, new(owner="carol", sha=sha(401)))
    with db.read() as s:
        positions = jobs.queue_positions(s)
    # Nobody has been served yet: oldest first, one job per owner per turn.
    assert positions[victim.id] == 2 and positions[carol.id] == 3
    assert sorted(positions.values()) == list(range(1, 9))
    with db.write() as s:
        first = jobs.claim(s, "w1", 30)
    assert first is not None and first.analysis_id not in (victim.id, carol.id)  # mallory's oldest
    with db.write() as s:
        second = jobs.claim(s, "w2", 30)
    assert second is not None and second.analysis_id == victim.id  # not mallory's second
    with db.read() as s:
        assert jobs.queue_positions(s)[carol.id] == 1
    with db.write() as s:
        assert jobs.complete(s, "w1", first, _outcome(), 1.0)
        third = jobs.claim(s, "w1", 30)
    # Mallory was served, then the victim: carol has never been, so it is her turn.
    assert third is not None and third.analysis_id == carol.id
    # Alone in the queue, one owner may use every worker (up to the last of its jobs).
    with db.write() as s:
        rest = [jobs.claim(s, f"x{i}", 30) for i in range(6)]
    assert [j is not None for j in rest] == [True] * 5 + [False]


def test_a_user_concurrency_of_two_lets_an_owner_run_two_before_others_wait(db: Database) -> None:
    with db.write() as s:
        for i in range(3):
            repo.create(s, new(owner="ann", sha=sha(500 + i)))
        bob = repo.create(s, new(owner="bob", sha=sha(510)))
    with db.write() as s:
        a1 = jobs.claim(s, "w1", 30, user_concurrency=2)
    with db.write() as s:
        b1 = jobs.claim(s, "w2", 30, user_concurrency=2)
    with db.write() as s:
        a2 = jobs.claim(s, "w3", 30, user_concurrency=2)
    assert a1 is not None and b1 is not None and a2 is not None
    assert b1.analysis_id == bob.id and a2.analysis_id not in (a1.analysis_id, bob.id)
