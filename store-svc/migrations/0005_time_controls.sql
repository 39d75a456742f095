-- 0005_time_controls.sql — time controls, game clocks and their deadlines,
-- invitations that can be cancelled and that expire.
--
--   invitations + tc_kind, tc_days, tc_initial_s, tc_increment_s,
--       tc_max_overtime_min: the scrabble.v1.TimeControl chosen at Invite
--       (tc_kind NULL: set by store_create_invitation_tc right after the
--       row is made; read as UNTIMED). time_family: the rating family
--       ('untimed', 'correspondence', 'realtime'; store_time_family() in
--       store-svc). expires_at: when an invitation still waiting for answers
--       expires (NULL: never). status gains 4 cancelled, 5 expired.
--   games + the same tc_* columns and time_family, copied from the
--       invitation when the game is inserted (trigger), and the clock as
--       game-svc last committed it: clock_remaining_ms (REALTIME, by seat),
--       clock_turn_started_ms (0: not started), clock_deadline_ms,
--       clock_deadline_reason (EndReason 4 timeout / 5 abandoned),
--       clock_warning_ms. None is indexed: a move's update stays HOT.
--   game_deadlines(game_id, kind, seq, due_ms, end_reason, deadline_ms,
--       claimed_until_ms) PK (game_id, kind)
--       kind 1: the game ends at due_ms (end_reason) unless a move comes;
--       kind 2: TIME_WARNING to the seat to move at due_ms (deadline_ms:
--       when it runs out). Moved by every commit whose clock moves it
--       (seq: the commit that last moved it; an untimed game's rounded
--       deadline may outlive several moves), deleted when the game
--       finishes (trigger). Times are game-svc's clock (ms).
--       claimed_until_ms: a timeout leased to a game-svc instance
--       (store_claim_deadlines, SKIP LOCKED), offered again after it.
--
-- Why the deadlines live in Postgres: a restart of game-svc, or the game
-- moving to another instance, keeps them; and the claim (row locks, SKIP
-- LOCKED, a lease) plus TimeoutGame's check of the game's seq make exactly
-- one instance end each game.

ALTER TABLE invitations
    ADD COLUMN tc_kind smallint,
    ADD COLUMN tc_days int NOT NULL DEFAULT 0,
    ADD COLUMN tc_initial_s int NOT NULL DEFAULT 0,
    ADD COLUMN tc_increment_s int NOT NULL DEFAULT 0,
    ADD COLUMN tc_max_overtime_min int NOT NULL DEFAULT 0,
    ADD COLUMN time_family text NOT NULL DEFAULT 'untimed',
    ADD COLUMN expires_at timestamptz;
-- Open invitations made before this migration expire as new ones would
-- by default (7 days).
UPDATE invitations SET expires_at = created_at + interval '7 days' WHERE status = 1;
-- The expiry sweep: open invitations by expiry time.
CREATE INDEX invitations_expiry ON invitations (expires_at) WHERE status = 1;

ALTER TABLE games
    ADD COLUMN tc_kind smallint NOT NULL DEFAULT 1,
    ADD COLUMN tc_days int NOT NULL DEFAULT 0,
    ADD COLUMN tc_initial_s int NOT NULL DEFAULT 0,
    ADD COLUMN tc_increment_s int NOT NULL DEFAULT 0,
    ADD COLUMN tc_max_overtime_min int NOT NULL DEFAULT 0,
    ADD COLUMN time_family text NOT NULL DEFAULT 'untimed',
    ADD COLUMN clock_remaining_ms bigint[] NOT NULL DEFAULT '{}',
    ADD COLUMN clock_turn_started_ms bigint NOT NULL DEFAULT 0,
    ADD COLUMN clock_deadline_ms bigint NOT NULL DEFAULT 0,
    ADD COLUMN clock_deadline_reason smallint NOT NULL DEFAULT 0,
    ADD COLUMN clock_warning_ms bigint NOT NULL DEFAULT 0;

CREATE TABLE game_deadlines (
    game_id          bigint NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    kind             smallint NOT NULL,
    seq              bigint NOT NULL,
    due_ms           bigint NOT NULL,
    end_reason       smallint NOT NULL DEFAULT 0,
    deadline_ms      bigint NOT NULL DEFAULT 0,
    claimed_until_ms bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (game_id, kind)
);
CREATE INDEX game_deadlines_due ON game_deadlines (due_ms);

-- A new game takes the invitation's time control (whatever function
-- inserts it); a game inserted without one (seeded directly, as the load
-- driver and store-bench do) keeps the column defaults: untimed.
CREATE FUNCTION store__game_time_control() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    v invitations%ROWTYPE;
BEGIN
    SELECT * INTO v FROM invitations WHERE id = NEW.invitation_id;
    IF FOUND THEN
        NEW.tc_kind := coalesce(v.tc_kind, 1);
        NEW.tc_days := v.tc_days;
        NEW.tc_initial_s := v.tc_initial_s;
        NEW.tc_increment_s := v.tc_increment_s;
        NEW.tc_max_overtime_min := v.tc_max_overtime_min;
        NEW.time_family := v.time_family;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER games_time_control BEFORE INSERT ON games
    FOR EACH ROW EXECUTE FUNCTION store__game_time_control();

-- A finished game has nothing left to time (every way a game ends).
CREATE FUNCTION store__drop_deadlines() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM game_deadlines WHERE game_id = NEW.id;
    RETURN NEW;
END
$$;
CREATE TRIGGER games_finished_deadlines AFTER UPDATE OF status ON games
    FOR EACH ROW WHEN (NEW.status <> 1) EXECUTE FUNCTION store__drop_deadlines();

CREATE FUNCTION store_time_control_json(p_kind smallint, p_days int, p_initial int,
                                        p_increment int, p_overtime int) RETURNS json
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT json_build_object('kind', coalesce(p_kind, 1), 'days_per_move', p_days,
        'initial_seconds', p_initial, 'increment_seconds', p_increment,
        'max_overtime_minutes', p_overtime)
$$;

-- 0001's invitation JSON plus time_control and expires_at_ms.
CREATE OR REPLACE FUNCTION store_invitation_json(p_id bigint) RETURNS json
    LANGUAGE sql STABLE
    AS $$
    SELECT json_build_object('invitation_id', i.id, 'inviter_id', i.inviter_id,
        'inviter_handle', ia.handle, 'status', i.status,
        'game_id', coalesce(i.game_id, 0), 'lexicon', i.lexicon,
        'created_at_ms', store_ms(i.created_at),
        'time_control', store_time_control_json(i.tc_kind, i.tc_days, i.tc_initial_s,
                                                i.tc_increment_s, i.tc_max_overtime_min),
        'expires_at_ms', coalesce(store_ms(i.expires_at), 0),
        'seats', (SELECT json_agg(json_build_object('account_id', s.account_id,
                      'handle', a.handle, 'answer', s.answer) ORDER BY s.seat)
                  FROM invitation_seats s JOIN accounts a ON a.id = s.account_id
                  WHERE s.invitation_id = i.id))
    FROM invitations i JOIN accounts ia ON ia.id = i.inviter_id
    WHERE i.id = p_id
$$;

-- 0001's game JSON plus time_control, time_family and clock.
CREATE OR REPLACE FUNCTION store_game_json(p_id bigint) RETURNS json
    LANGUAGE sql STABLE
    AS $$
    SELECT json_build_object('game_id', g.id,
        'invitation_id', coalesce(g.invitation_id, 0), 'lexicon', g.lexicon,
        'seed', g.seed::text, 'status', g.status, 'to_move', g.to_move,
        'seq', g.seq, 'end_reason', g.end_reason, 'winners', g.winners,
        'created_at_ms', store_ms(g.created_at),
        'updated_at_ms', store_ms(g.updated_at),
        'updated_at_us', floor(extract(epoch FROM g.updated_at) * 1000000)::bigint::text,
        'time_control', store_time_control_json(g.tc_kind, g.tc_days, g.tc_initial_s,
                                                g.tc_increment_s, g.tc_max_overtime_min),
        'time_family', g.time_family,
        'clock', json_build_object('remaining_ms', g.clock_remaining_ms,
            'turn_started_ms', g.clock_turn_started_ms, 'deadline_ms', g.clock_deadline_ms,
            'deadline_reason', g.clock_deadline_reason, 'warning_ms', g.clock_warning_ms),
        'seats', (SELECT json_agg(json_build_object('seat', p.seat,
                      'account_id', p.account_id, 'handle', a.handle,
                      'score', p.score) ORDER BY p.seat)
                  FROM game_players p JOIN accounts a ON a.id = p.account_id
                  WHERE p.game_id = g.id))
    FROM games g WHERE g.id = p_id
$$;

-- Invite with a time control: 0003's store_create_invitation, then the
-- time control and expiry on the invitation it made (a request_id repeat
-- finds its invitation's already set and keeps it).
CREATE FUNCTION store_create_invitation_tc(p_inviter_id bigint, p_handles text[], p_folded text[],
                                           p_lexicon text, p_request_id text,
                                           p_tc_kind smallint, p_tc_days int, p_tc_initial int,
                                           p_tc_increment int, p_tc_overtime int,
                                           p_family text, p_ttl_ms bigint,
                                           OUT o_code text, OUT o_detail text,
                                           OUT o_invitation json)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT c.o_code, c.o_detail, c.o_invitation INTO o_code, o_detail, o_invitation
        FROM store_create_invitation(p_inviter_id, p_handles, p_folded, p_lexicon,
                                     p_request_id) c;
    IF o_code <> 'ok' THEN
        RETURN;
    END IF;
    v_id := (o_invitation ->> 'invitation_id')::bigint;
    UPDATE invitations SET tc_kind = p_tc_kind, tc_days = p_tc_days, tc_initial_s = p_tc_initial,
        tc_increment_s = p_tc_increment, tc_max_overtime_min = p_tc_overtime,
        time_family = p_family, expires_at = created_at + p_ttl_ms * interval '1 millisecond'
        WHERE id = v_id AND tc_kind IS NULL;
    IF FOUND THEN
        o_invitation := store_invitation_json(v_id);
    END IF;
END
$$;

-- RespondInvitation with closed invitations made explicit (docs/API.md):
-- the same answer again is a retry while the invitation is open or
-- started (and for the invitee whose decline closed it); any other answer
-- to an invitation that is not open, or is past expires_at, is
-- 'invitation_closed'.
CREATE OR REPLACE FUNCTION store_respond_invitation(p_account_id bigint, p_invitation_id bigint,
                                                    p_accept boolean,
                                                    OUT o_code text, OUT o_invitation json)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_status smallint;
    v_expires timestamptz;
    v_answer smallint;
    v_want smallint := CASE WHEN p_accept THEN 2 ELSE 3 END;
    v_open boolean;
BEGIN
    SELECT status, expires_at INTO v_status, v_expires FROM invitations
        WHERE id = p_invitation_id FOR UPDATE;
    IF NOT FOUND THEN
        o_code := 'not_found';
        RETURN;
    END IF;
    SELECT answer INTO v_answer FROM invitation_seats
        WHERE invitation_id = p_invitation_id AND account_id = p_account_id AND seat > 0;
    IF NOT FOUND THEN
        o_code := 'not_invited';
        RETURN;
    END IF;
    v_open := v_status = 1 AND (v_expires IS NULL OR v_expires > now());
    IF v_answer = v_want AND (v_open OR v_status = 2 OR (v_status = 3 AND v_want = 3)) THEN
        o_code := 'ok';
        o_invitation := store_invitation_json(p_invitation_id);
        RETURN;
    END IF;
    IF NOT v_open OR v_answer <> 1 THEN
        o_code := 'invitation_closed';
        RETURN;
    END IF;
    UPDATE invitation_seats SET answer = v_want
        WHERE invitation_id = p_invitation_id AND account_id = p_account_id;
    IF NOT p_accept THEN
        UPDATE invitations SET status = 3 WHERE id = p_invitation_id;
    END IF;
    o_code := 'ok';
    o_invitation := store_invitation_json(p_invitation_id);
END
$$;

-- Only the inviter may cancel, only an open invitation; cancelling a
-- cancelled one again is a harmless retry.
CREATE FUNCTION store_cancel_invitation(p_account_id bigint, p_invitation_id bigint,
                                        OUT o_code text, OUT o_invitation json)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_inv invitations%ROWTYPE;
BEGIN
    SELECT * INTO v_inv FROM invitations WHERE id = p_invitation_id FOR UPDATE;
    IF NOT FOUND THEN
        o_code := 'not_found';
        RETURN;
    END IF;
    IF v_inv.inviter_id <> p_account_id THEN
        o_code := 'not_inviter';
        RETURN;
    END IF;
    IF v_inv.status = 4 THEN
        o_code := 'ok';
        o_invitation := store_invitation_json(p_invitation_id);
        RETURN;
    END IF;
    IF v_inv.status <> 1 OR (v_inv.expires_at IS NOT NULL AND v_inv.expires_at <= now()) THEN
        o_code := 'invitation_closed';
        RETURN;
    END IF;
    UPDATE invitations SET status = 4 WHERE id = p_invitation_id;
    o_code := 'ok';
    o_invitation := store_invitation_json(p_invitation_id);
END
$$;

-- Writes a game's clock and its deadlines (the game row locked by the
-- caller, the game active). Every move calls this, so it writes only what
-- changed: the clock columns when more than the turn's start changed (an
-- untimed game's abandonment deadline is rounded to the hour by game-svc,
-- so most of its moves change nothing here), each deadline row only when
-- its time moved (a new row: no lease).
CREATE FUNCTION store__set_clock(p_game_id bigint, p_seq bigint, p_remaining bigint[],
                                 p_turn_started bigint, p_deadline bigint, p_reason smallint,
                                 p_warning bigint)
    RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE games SET clock_remaining_ms = p_remaining, clock_turn_started_ms = p_turn_started,
        clock_deadline_ms = p_deadline, clock_deadline_reason = p_reason,
        clock_warning_ms = p_warning
        WHERE id = p_game_id
          AND (clock_turn_started_ms = 0
               OR (clock_remaining_ms, clock_deadline_ms, clock_deadline_reason, clock_warning_ms)
                  IS DISTINCT FROM (p_remaining, p_deadline, p_reason, p_warning));
    -- The rows are replaced only when their time moved (delete + insert:
    -- measured cheaper here than an upsert under group commit).
    PERFORM 1 FROM game_deadlines
        WHERE game_id = p_game_id AND kind = 1 AND due_ms = p_deadline AND end_reason = p_reason;
    IF NOT FOUND THEN
        DELETE FROM game_deadlines WHERE game_id = p_game_id AND kind = 1;
        IF p_deadline > 0 THEN
            INSERT INTO game_deadlines (game_id, kind, seq, due_ms, end_reason)
                VALUES (p_game_id, 1, p_seq, p_deadline, p_reason);
        END IF;
    END IF;
    IF p_warning <= 0 OR p_deadline <= 0 OR p_warning >= p_deadline THEN
        p_warning := 0;
    END IF;
    PERFORM 1 FROM game_deadlines
        WHERE game_id = p_game_id AND kind = 2 AND due_ms = p_warning;
    IF NOT FOUND THEN
        DELETE FROM game_deadlines WHERE game_id = p_game_id AND kind = 2;
        IF p_warning > 0 THEN
            INSERT INTO game_deadlines (game_id, kind, seq, due_ms, deadline_ms)
                VALUES (p_game_id, 2, p_seq, p_warning, p_deadline);
        END IF;
    END IF;
END
$$;

CREATE FUNCTION store__clock_json(p_game_id bigint) RETURNS json
    LANGUAGE sql STABLE
    AS $$
    SELECT json_build_object('remaining_ms', g.clock_remaining_ms,
        'turn_started_ms', g.clock_turn_started_ms, 'deadline_ms', g.clock_deadline_ms,
        'deadline_reason', g.clock_deadline_reason, 'warning_ms', g.clock_warning_ms)
    FROM games g WHERE g.id = p_game_id
$$;

-- The first clock of a game, once: a game whose clock was started (or that
-- has moved on, or ended) keeps what it has, and the stored clock is
-- returned either way.
CREATE FUNCTION store_start_clock(p_game_id bigint, p_remaining bigint[], p_turn_started bigint,
                                  p_deadline bigint, p_reason smallint, p_warning bigint,
                                  OUT o_code text, OUT o_clock json)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_g games%ROWTYPE;
BEGIN
    SELECT * INTO v_g FROM games WHERE id = p_game_id FOR UPDATE;
    IF NOT FOUND THEN
        o_code := 'not_found';
        RETURN;
    END IF;
    IF v_g.status = 1 AND v_g.seq = 0 AND v_g.clock_turn_started_ms = 0 THEN
        PERFORM store__set_clock(p_game_id, 0, p_remaining, p_turn_started, p_deadline, p_reason,
                                 p_warning);
    END IF;
    o_code := 'ok';
    o_clock := store__clock_json(p_game_id);
END
$$;

-- CommitMove with a clock: 0001's store_commit_move, then (when it
-- committed and the game goes on) the clock and deadlines of the new turn,
-- in the same transaction.
CREATE FUNCTION store_commit_move_clock(p_game_id bigint, p_seq bigint, p_seat int,
                                        p_account_id bigint, p_kind smallint, p_score int,
                                        p_notation text, p_move bytea, p_to_move int,
                                        p_scores int[], p_finish boolean, p_end_reason smallint,
                                        p_final int[], p_winners int[],
                                        p_remaining bigint[], p_turn_started bigint,
                                        p_deadline bigint, p_reason smallint, p_warning bigint,
                                        OUT o_code text, OUT o_at_ms bigint, OUT o_move bytea)
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT c.o_code, c.o_at_ms, c.o_move INTO o_code, o_at_ms, o_move
        FROM store_commit_move(p_game_id, p_seq, p_seat, p_account_id, p_kind, p_score,
                               p_notation, p_move, p_to_move, p_scores, p_finish, p_end_reason,
                               p_final, p_winners) c;
    IF o_code <> 'ok' THEN
        RETURN;
    END IF;
    IF p_finish THEN
        UPDATE games SET clock_remaining_ms = p_remaining, clock_turn_started_ms = p_turn_started,
            clock_deadline_ms = 0, clock_deadline_reason = 0, clock_warning_ms = 0
            WHERE id = p_game_id;
    ELSE
        PERFORM store__set_clock(p_game_id, p_seq, p_remaining, p_turn_started, p_deadline,
                                 p_reason, p_warning);
    END IF;
END
$$;

-- Ends a game on time, only while it is active at p_seq: of several
-- instances racing to fire one deadline, exactly one gets 'ok'.
CREATE FUNCTION store_timeout_game(p_game_id bigint, p_seq bigint, p_end_reason smallint,
                                   p_final int[], p_winners int[], p_remaining bigint[],
                                   OUT o_code text, OUT o_game json)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_status smallint;
    v_seq bigint;
BEGIN
    SELECT status, seq INTO v_status, v_seq FROM games WHERE id = p_game_id FOR UPDATE;
    IF NOT FOUND THEN
        o_code := 'not_found';
        RETURN;
    END IF;
    IF v_status <> 1 THEN
        o_code := 'game_over';
        RETURN;
    END IF;
    IF v_seq <> p_seq THEN
        o_code := 'stale_seq';
        RETURN;
    END IF;
    UPDATE games SET clock_remaining_ms = p_remaining, clock_deadline_ms = 0,
        clock_deadline_reason = 0, clock_warning_ms = 0
        WHERE id = p_game_id;
    PERFORM store__finish(p_game_id, p_end_reason, p_final, p_winners);
    o_code := 'ok';
    o_game := store_game_json(p_game_id);
END
$$;

-- The due deadlines, for one game-svc poll (p_now_ms is its clock):
--   kind 1 (game timeouts): locked with SKIP LOCKED, so concurrent pollers
--     never take the same row, and leased until p_now_ms + p_lease_ms; the
--     row goes when the game ends (TimeoutGame, or a move replacing it).
--   kind 2 (warnings): deleted as they are taken.
--   kind 3 (invitations): open invitations past expires_at that still
--     wait for an answer become EXPIRED here (status 5).
CREATE FUNCTION store_claim_deadlines(p_now_ms bigint, p_limit int, p_lease_ms bigint)
    RETURNS TABLE (o_kind smallint, o_game_id bigint, o_seq bigint, o_due_ms bigint,
                   o_end_reason smallint, o_account_id bigint, o_deadline_ms bigint,
                   o_invitation json)
    LANGUAGE plpgsql
    AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT d.game_id, d.kind FROM game_deadlines d
             WHERE d.due_ms <= p_now_ms AND d.claimed_until_ms <= p_now_ms
             ORDER BY d.due_ms LIMIT p_limit FOR UPDATE SKIP LOCKED
    LOOP
        IF r.kind = 1 THEN
            UPDATE game_deadlines d SET claimed_until_ms = p_now_ms + p_lease_ms
                WHERE d.game_id = r.game_id AND d.kind = 1
                RETURNING d.kind, d.game_id, d.seq, d.due_ms, d.end_reason, 0::bigint,
                          d.due_ms, NULL::json
                INTO o_kind, o_game_id, o_seq, o_due_ms, o_end_reason, o_account_id,
                     o_deadline_ms, o_invitation;
        ELSE
            DELETE FROM game_deadlines d WHERE d.game_id = r.game_id AND d.kind = r.kind
                RETURNING d.kind, d.game_id, d.seq, d.due_ms, 0::smallint,
                          (SELECT p.account_id FROM games g JOIN game_players p
                               ON p.game_id = g.id AND p.seat = g.to_move
                           WHERE g.id = d.game_id),
                          d.deadline_ms, NULL::json
                INTO o_kind, o_game_id, o_seq, o_due_ms, o_end_reason, o_account_id,
                     o_deadline_ms, o_invitation;
        END IF;
        RETURN NEXT;
    END LOOP;
    FOR r IN SELECT i.id FROM invitations i
             WHERE i.status = 1 AND i.expires_at <= now()
               AND EXISTS (SELECT 1 FROM invitation_seats s
                           WHERE s.invitation_id = i.id AND s.answer = 1)
             ORDER BY i.expires_at LIMIT p_limit FOR UPDATE SKIP LOCKED
    LOOP
        UPDATE invitations SET status = 5 WHERE id = r.id;
        o_kind := 3;
        o_game_id := 0;
        o_seq := 0;
        o_due_ms := 0;
        o_end_reason := 0;
        o_account_id := 0;
        o_deadline_ms := 0;
        o_invitation := store_invitation_json(r.id);
        RETURN NEXT;
    END LOOP;
END
$$;
