-- 0003_tokens: API tokens for `STRATA_AUTH_MODE=token`. Only a sha256 of each secret is kept.

CREATE TABLE api_tokens (
    id         text PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    role       text NOT NULL CHECK (role IN ('reader', 'writer', 'operator', 'admin')),
    team       text NOT NULL,
    user_id    text,
    agent_id   text,
    label      text,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
