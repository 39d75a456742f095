-- 0004_events.sql — the durable per-account event log (docs/ARCHITECTURE.md,
-- "Events").
--
--   events(id, account_id, dedupe, body, created_at)
--       One row per event per recipient. id is the event id clients see
--       (Event.event_id); body is the packed scrabble.v1.Event its writer
--       built, without event_id (the store adds it when reading), so the
--       log carries any event type or field without a schema change.
--       dedupe (optional) makes a writer's repeat harmless: at most one
--       row per (account_id, dedupe).
--   event_horizon(account_id, pruned_upto)
--       The highest id pruned from each account's log: a resume from
--       below it has lost events (OUT_OF_RANGE events_expired).
--   event_relay(relayed_upto)
--       How far store-svc's relay has published to Redis (a lower bound:
--       after a crash it republishes from here; clients drop repeats by id).
--
-- Order: ids come from one sequence and every write goes through
-- store-svc's single writer connection, one transaction at a time, so ids
-- become visible in increasing order: a reader that has seen id N has seen
-- every committed id below N. (A second writer would break that; see
-- ARCHITECTURE.md.)
--
-- No foreign key to accounts: the check would cost an index probe on the
-- hottest insert, and rows of a deleted account age out with the prune.

CREATE TABLE events (
    id         bigserial PRIMARY KEY,
    account_id bigint NOT NULL,
    dedupe     text,
    body       bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_account ON events (account_id, id);
CREATE UNIQUE INDEX events_dedupe ON events (account_id, dedupe) WHERE dedupe IS NOT NULL;

CREATE TABLE event_horizon (
    account_id  bigint PRIMARY KEY,
    pruned_upto bigint NOT NULL
);

CREATE TABLE event_relay (
    one          boolean PRIMARY KEY DEFAULT true CHECK (one),
    relayed_upto bigint NOT NULL
);
INSERT INTO event_relay VALUES (true, 0);

-- A protobuf varint (non-negative values only).
CREATE FUNCTION store_pb_varint(p_v bigint) RETURNS bytea
    LANGUAGE plpgsql IMMUTABLE STRICT
    AS $$
DECLARE
    v_out bytea := '\x'::bytea;
    v bigint := p_v;
BEGIN
    LOOP
        IF v < 128 THEN
            RETURN v_out || set_byte('\x00'::bytea, 0, v::int);
        END IF;
        v_out := v_out || set_byte('\x00'::bytea, 0, ((v & 127) | 128)::int);
        v := v >> 7;
    END LOOP;
END
$$;

-- Appends events: p_bodies are the packed events in hex (one text[]
-- parameter carries them without bytea-array escaping), p_dedupe '' for
-- none. A (account, dedupe) already stored is skipped.
CREATE FUNCTION store_append_events(p_accounts bigint[], p_dedupe text[], p_bodies text[])
    RETURNS void
    LANGUAGE sql
    AS $$
    INSERT INTO events (account_id, dedupe, body)
        SELECT u.a, nullif(u.d, ''), decode(u.b, 'hex')
        FROM unnest(p_accounts, p_dedupe, p_bodies) WITH ORDINALITY AS u (a, d, b, ord)
        ORDER BY u.ord
        ON CONFLICT DO NOTHING
$$;

-- The events of a write that reported p_code: appended (without dedupe
-- keys) only when the write applied ('ok').
CREATE FUNCTION store_append_events_if_ok(p_code text, p_accounts bigint[], p_bodies text[])
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF p_code = 'ok' AND cardinality(p_accounts) > 0 THEN
        PERFORM store_append_events(p_accounts,
                                    array_fill(''::text, ARRAY[cardinality(p_accounts)]),
                                    p_bodies);
    END IF;
END
$$;

-- CommitMove with its events: they are written only when the move is new
-- ('ok'), in the move's transaction, so a committed move always has its
-- events and a duplicate adds none.
CREATE FUNCTION store_commit_move_ev(p_game_id bigint, p_seq bigint, p_seat int,
                                     p_account_id bigint, p_kind smallint, p_score int,
                                     p_notation text, p_move bytea, p_to_move int,
                                     p_scores int[], p_finish boolean, p_end_reason smallint,
                                     p_final int[], p_winners int[],
                                     p_ev_accounts bigint[], p_ev_bodies text[],
                                     OUT o_code text, OUT o_at_ms bigint, OUT o_move bytea)
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT c.o_code, c.o_at_ms, c.o_move INTO o_code, o_at_ms, o_move
        FROM store_commit_move(p_game_id, p_seq, p_seat, p_account_id, p_kind, p_score,
                               p_notation, p_move, p_to_move, p_scores, p_finish, p_end_reason,
                               p_final, p_winners) c;
    PERFORM store_append_events_if_ok(o_code, p_ev_accounts, p_ev_bodies);
END
$$;

CREATE FUNCTION store_finish_game_ev(p_game_id bigint, p_end_reason smallint, p_final int[],
                                     p_winners int[], p_ev_accounts bigint[], p_ev_bodies text[],
                                     OUT o_code text, OUT o_game json)
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT f.o_code, f.o_game INTO o_code, o_game
        FROM store_finish_game(p_game_id, p_end_reason, p_final, p_winners) f;
    PERFORM store_append_events_if_ok(o_code, p_ev_accounts, p_ev_bodies);
END
$$;

-- AppendChat with its events. The writer cannot know the line's id and
-- time, so each body gets them appended as protobuf fields (a later
-- occurrence of a scalar wins, a repeated sub-message merges):
-- Event.chat (7) { message_id (1), at_ms (6) } and Event.at_ms (13).
-- dedupe 'chat:<id>' keeps a repeated request id from adding events.
CREATE FUNCTION store_append_chat_ev(p_game_id bigint, p_account_id bigint, p_body text,
                                     p_request_id text, p_ev_accounts bigint[],
                                     p_ev_bodies text[],
                                     OUT o_code text, OUT o_message_id bigint,
                                     OUT o_handle text, OUT o_at_ms bigint, OUT o_body text)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_chat bytea;
    v_patch text;
BEGIN
    SELECT c.o_code, c.o_message_id, c.o_handle, c.o_at_ms, c.o_body
        INTO o_code, o_message_id, o_handle, o_at_ms, o_body
        FROM store_append_chat(p_game_id, p_account_id, p_body, p_request_id) c;
    IF o_code <> 'ok' OR cardinality(p_ev_accounts) = 0 THEN
        RETURN;
    END IF;
    v_chat := '\x08'::bytea || store_pb_varint(o_message_id)
              || '\x30'::bytea || store_pb_varint(o_at_ms);
    v_patch := encode('\x3a'::bytea || store_pb_varint(length(v_chat)) || v_chat
                      || '\x68'::bytea || store_pb_varint(o_at_ms), 'hex');
    PERFORM store_append_events(
        p_ev_accounts,
        array_fill(('chat:' || o_message_id)::text, ARRAY[cardinality(p_ev_accounts)]),
        ARRAY(SELECT b || v_patch FROM unnest(p_ev_bodies) WITH ORDINALITY AS u (b, ord)
              ORDER BY ord));
END
$$;

-- The prune: events older than p_max_age, and each account's events
-- beyond its newest p_keep (looking only at accounts with events newer
-- than p_since, the previous round's high mark, so a round costs what
-- arrived since the last one). Records what went in event_horizon.
-- Returns how many accounts lost events and the high mark for the next round.
CREATE FUNCTION store_prune_events(p_max_age_ms bigint, p_keep int, p_since bigint,
                                   OUT o_accounts bigint, OUT o_high bigint)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_cut bigint;
    v_n bigint;
BEGIN
    o_accounts := 0;
    SELECT coalesce(max(id), p_since) INTO o_high FROM events;
    -- By age: ids grow with time, so the old rows are the lowest ids.
    SELECT max(id) INTO v_cut FROM (SELECT id, created_at FROM events ORDER BY id LIMIT 50000) x
        WHERE x.created_at < now() - p_max_age_ms * interval '1 millisecond';
    IF v_cut IS NOT NULL THEN
        WITH d AS (DELETE FROM events WHERE id <= v_cut RETURNING account_id, id)
        INSERT INTO event_horizon (account_id, pruned_upto)
            SELECT account_id, max(id) FROM d GROUP BY account_id
            ON CONFLICT (account_id) DO UPDATE
                SET pruned_upto = greatest(event_horizon.pruned_upto, excluded.pruned_upto);
        GET DIAGNOSTICS v_n = ROW_COUNT;
        o_accounts := o_accounts + v_n;
    END IF;
    -- By count.
    WITH acc AS (SELECT DISTINCT account_id FROM events WHERE id > p_since),
         cut AS (SELECT a.account_id,
                        (SELECT e.id FROM events e WHERE e.account_id = a.account_id
                         ORDER BY e.id DESC OFFSET p_keep LIMIT 1) AS upto
                 FROM acc a),
         d AS (DELETE FROM events e USING cut
               WHERE cut.upto IS NOT NULL AND e.account_id = cut.account_id AND e.id <= cut.upto
               RETURNING e.account_id, e.id)
    INSERT INTO event_horizon (account_id, pruned_upto)
        SELECT account_id, max(id) FROM d GROUP BY account_id
        ON CONFLICT (account_id) DO UPDATE
            SET pruned_upto = greatest(event_horizon.pruned_upto, excluded.pruned_upto);
    GET DIAGNOSTICS v_n = ROW_COUNT;
    o_accounts := o_accounts + v_n;
END
$$;
