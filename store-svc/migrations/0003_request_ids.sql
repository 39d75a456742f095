-- 0003_request_ids.sql — at-most-once SendChat and Invite.
--
--   request_ids(account_id, kind, request_id, result_id, created_at)
--       PK (account_id, kind, request_id). One row per client request id
--       that created something: kind 1 = a chat line (result_id =
--       chat_messages.id), kind 2 = an invitation (result_id =
--       invitations.id). A repeat of the same (account, kind, id) within
--       the retention (24 h, the constant in store_request_claim) returns
--       the row it names instead of creating another. Older rows count as
--       absent and are purged a few at a time by later claims (and go with
--       their account).
--
-- Why a table of its own rather than a column on chat_messages and
-- invitations: one claim/purge mechanism for every kind of request, and
-- the rows can expire without touching the data they point at.
--
-- The claim is taken in the same transaction as the write it guards, after
-- the request's own checks (so a refused request leaves no claim behind):
-- a concurrent repeat blocks on the primary key until the first commits,
-- then finds its result; if the first rolls back, the repeat proceeds.

CREATE TABLE request_ids (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind       smallint NOT NULL,
    request_id text NOT NULL,
    result_id  bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, kind, request_id)
);
-- The purge: the oldest rows first.
CREATE INDEX request_ids_created ON request_ids (created_at);

-- Claims (p_account_id, p_kind, p_request_id) for a new write, or returns
-- the result id of the write that claimed it within the retention. Returns
-- NULL when the claim is new (the caller writes, then store_request_done),
-- else the earlier result id. Each call also purges up to 4 expired rows,
-- so the table stays near (claims per 24 h) without a background job.
CREATE FUNCTION store_request_claim(p_account_id bigint, p_kind smallint, p_request_id text)
    RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_result bigint;
BEGIN
    DELETE FROM request_ids WHERE ctid IN (
        SELECT ctid FROM request_ids WHERE created_at < now() - interval '24 hours'
        ORDER BY created_at LIMIT 4);
    DELETE FROM request_ids WHERE account_id = p_account_id AND kind = p_kind
        AND request_id = p_request_id AND created_at < now() - interval '24 hours';
    INSERT INTO request_ids (account_id, kind, request_id)
        VALUES (p_account_id, p_kind, p_request_id)
        ON CONFLICT DO NOTHING;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    SELECT result_id INTO v_result FROM request_ids
        WHERE account_id = p_account_id AND kind = p_kind AND request_id = p_request_id;
    RETURN v_result;
END
$$;

CREATE FUNCTION store_request_done(p_account_id bigint, p_kind smallint, p_request_id text,
                                   p_result_id bigint)
    RETURNS void
    LANGUAGE sql
    AS $$
    UPDATE request_ids SET result_id = p_result_id
        WHERE account_id = p_account_id AND kind = p_kind AND request_id = p_request_id
$$;

-- The two writes below are new overloads (one more argument) of the
-- previous ones (0001's chat, 0002's invitation), which stay, so a store-svc of the previous release
-- still works against this schema during a rolling upgrade
-- (docs/OPERATIONS.md, Upgrades); a later migration drops them.
--
-- As in 0001, plus p_request_id ('' = none) and the stored body in the
-- reply (a repeat returns the original line, whatever text it carried).
CREATE FUNCTION store_append_chat(p_game_id bigint, p_account_id bigint, p_body text,
                                  p_request_id text,
                                  OUT o_code text, OUT o_message_id bigint,
                                  OUT o_handle text, OUT o_at_ms bigint, OUT o_body text)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_at timestamptz;
BEGIN
    PERFORM 1 FROM games WHERE id = p_game_id;
    IF NOT FOUND THEN
        o_code := 'not_found';
        RETURN;
    END IF;
    SELECT a.handle INTO o_handle FROM game_players p JOIN accounts a ON a.id = p.account_id
        WHERE p.game_id = p_game_id AND p.account_id = p_account_id;
    IF NOT FOUND THEN
        o_code := 'not_a_player';
        RETURN;
    END IF;
    IF p_request_id <> '' THEN
        o_message_id := store_request_claim(p_account_id, 1::smallint, p_request_id);
        IF o_message_id IS NOT NULL THEN
            SELECT c.body, c.created_at, a.handle INTO o_body, v_at, o_handle
                FROM chat_messages c JOIN accounts a ON a.id = c.account_id
                WHERE c.id = o_message_id;
            IF FOUND THEN
                o_code := 'ok';
                o_at_ms := store_ms(v_at);
                RETURN;
            END IF;
            -- The line is gone (its game was deleted): write it anew.
        END IF;
    END IF;
    INSERT INTO chat_messages (game_id, account_id, body) VALUES (p_game_id, p_account_id, p_body)
        RETURNING id, created_at INTO o_message_id, v_at;
    IF p_request_id <> '' THEN
        PERFORM store_request_done(p_account_id, 1::smallint, p_request_id, o_message_id);
    END IF;
    o_code := 'ok';
    o_at_ms := store_ms(v_at);
    o_body := p_body;
END
$$;

-- As 0002's, plus p_request_id.
CREATE FUNCTION store_create_invitation(p_inviter_id bigint, p_handles text[], p_folded text[],
                                        p_lexicon text, p_request_id text,
                                        OUT o_code text, OUT o_detail text,
                                        OUT o_invitation json)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_ids bigint[];
    v_id bigint;
    v_missing text;
BEGIN
    PERFORM 1 FROM accounts WHERE id = p_inviter_id;
    IF NOT FOUND THEN
        o_code := 'not_found';
        o_detail := 'inviter';
        RETURN;
    END IF;
    SELECT array_agg(store_account_by_handle(u.h, u.f) ORDER BY u.ord) INTO v_ids
        FROM unnest(p_handles, p_folded) WITH ORDINALITY AS u (h, f, ord);
    SELECT u.h INTO v_missing
        FROM unnest(p_handles, v_ids) AS u (h, id) WHERE u.id IS NULL LIMIT 1;
    IF FOUND THEN
        o_code := 'not_found';
        o_detail := v_missing;
        RETURN;
    END IF;
    IF p_inviter_id = ANY (v_ids)
       OR (SELECT count(DISTINCT x) FROM unnest(v_ids) AS x) <> cardinality(v_ids) THEN
        o_code := 'duplicate_invitee';
        RETURN;
    END IF;
    IF p_request_id <> '' THEN
        v_id := store_request_claim(p_inviter_id, 2::smallint, p_request_id);
        IF v_id IS NOT NULL THEN
            o_invitation := store_invitation_json(v_id);
            IF o_invitation IS NOT NULL THEN
                o_code := 'ok';
                RETURN;
            END IF;
        END IF;
    END IF;
    INSERT INTO invitations (inviter_id, lexicon) VALUES (p_inviter_id, p_lexicon)
        RETURNING id INTO v_id;
    INSERT INTO invitation_seats (invitation_id, seat, account_id, answer)
        SELECT v_id, 0, p_inviter_id, 2
        UNION ALL
        SELECT v_id, u.ord::int, u.id, 1 FROM unnest(v_ids) WITH ORDINALITY AS u (id, ord);
    IF p_request_id <> '' THEN
        PERFORM store_request_done(p_inviter_id, 2::smallint, p_request_id, v_id);
    END IF;
    o_code := 'ok';
    o_invitation := store_invitation_json(v_id);
END
$$;
