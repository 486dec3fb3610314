-- 0003_tokens: API tokens for `STRATA_AUTH_MODE=token`. Only a sha256 of each secret is kept.

CREATE TABLE api_tokens (
    id         TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    role       TEXT NOT NULL CHECK (role IN ('reader', 'writer', 'operator', 'admin')),
    team       TEXT NOT NULL,
    user_id    TEXT,
    agent_id   TEXT,
    label      TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
