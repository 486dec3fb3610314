-- 0004_jobs: the durable job queue (strata.domain.jobs draws the status machine).

CREATE TABLE jobs (
    id               TEXT PRIMARY KEY,
    kind             TEXT NOT NULL,
    -- pending → leased → done | retry_scheduled | dead; retry_scheduled → leased when due;
    -- dead | retry_scheduled → pending by an operator's retry.
    status           TEXT NOT NULL CHECK (status IN
                         ('pending', 'leased', 'retry_scheduled', 'done', 'dead')),
    payload          TEXT NOT NULL,
    team             TEXT NOT NULL,
    user_id          TEXT,
    agent_id         TEXT,
    run_id           TEXT,
    dedup_key        TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    next_attempt_at  TEXT,
    lease_owner      TEXT,
    lease_token      TEXT,
    lease_expires_at TEXT,
    last_error       TEXT,
    last_error_code  TEXT,
    result           TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);

-- Claims read due jobs oldest first.
CREATE INDEX jobs_due ON jobs (status, next_attempt_at, id);
-- One active job per dedup key (e.g. one extract job per remembered event).
CREATE UNIQUE INDEX jobs_active_dedup ON jobs (dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('pending', 'leased', 'retry_scheduled');

-- Append-only log of every status change, written by triggers.
CREATE TABLE job_events (
    rowid      INTEGER PRIMARY KEY,
    job_id     TEXT NOT NULL,
    from_status TEXT,
    to_status  TEXT NOT NULL,
    attempts   INTEGER NOT NULL,
    owner      TEXT,
    at         TEXT NOT NULL
);
CREATE INDEX job_events_job ON job_events (job_id, rowid);

CREATE TRIGGER jobs_log_insert AFTER INSERT ON jobs
BEGIN
    INSERT INTO job_events (job_id, from_status, to_status, attempts, owner, at)
    VALUES (new.id, NULL, new.status, new.attempts, NULL, new.updated_at);
END;

CREATE TRIGGER jobs_log_status AFTER UPDATE OF status, lease_token ON jobs
BEGIN
    INSERT INTO job_events (job_id, from_status, to_status, attempts, owner, at)
    VALUES (new.id, old.status, new.status, new.attempts, new.lease_owner, new.updated_at);
END;

CREATE TRIGGER job_events_are_append_only BEFORE UPDATE ON job_events
BEGIN
    SELECT RAISE(ABORT, 'job events are append-only');
END;
