-- 0004_jobs: the durable job queue (strata.domain.jobs draws the status machine).

CREATE TABLE jobs (
    id               text PRIMARY KEY,
    kind             text NOT NULL,
    -- pending → leased → done | retry_scheduled | dead; retry_scheduled → leased when due;
    -- dead | retry_scheduled → pending by an operator's retry.
    status           text NOT NULL CHECK (status IN
                         ('pending', 'leased', 'retry_scheduled', 'done', 'dead')),
    payload          jsonb NOT NULL,
    team             text NOT NULL,
    user_id          text,
    agent_id         text,
    run_id           text,
    dedup_key        text,
    attempts         integer NOT NULL DEFAULT 0,
    max_attempts     integer NOT NULL,
    next_attempt_at  timestamptz,
    lease_owner      text,
    lease_token      text,
    lease_expires_at timestamptz,
    last_error       text,
    last_error_code  text,
    result           jsonb,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);

-- Claims read due jobs oldest first (FOR UPDATE SKIP LOCKED).
CREATE INDEX jobs_due ON jobs (status, next_attempt_at, id);
-- One active job per dedup key (e.g. one extract job per remembered event).
CREATE UNIQUE INDEX jobs_active_dedup ON jobs (dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('pending', 'leased', 'retry_scheduled');

-- Append-only log of every status change, written by triggers.
CREATE TABLE job_events (
    id          bigserial PRIMARY KEY,
    job_id      text NOT NULL,
    from_status text,
    to_status   text NOT NULL,
    attempts    integer NOT NULL,
    owner       text,
    at          timestamptz NOT NULL
);
CREATE INDEX job_events_job ON job_events (job_id, id);

CREATE FUNCTION jobs_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO job_events (job_id, from_status, to_status, attempts, owner, at)
        VALUES (NEW.id, NULL, NEW.status, NEW.attempts, NULL, NEW.updated_at);
    ELSIF NEW.status IS DISTINCT FROM OLD.status
          OR NEW.lease_token IS DISTINCT FROM OLD.lease_token THEN
        INSERT INTO job_events (job_id, from_status, to_status, attempts, owner, at)
        VALUES (NEW.id, OLD.status, NEW.status, NEW.attempts, NEW.lease_owner, NEW.updated_at);
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER jobs_log_changes AFTER INSERT OR UPDATE ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_log();

CREATE FUNCTION job_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'job events are append-only';
END $$;

CREATE TRIGGER job_events_are_append_only BEFORE UPDATE ON job_events
    FOR EACH ROW EXECUTE FUNCTION job_events_append_only();
