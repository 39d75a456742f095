-- Time controls (0005) meet the durable event log (0004) and ratings
-- (0006). No migration before this one is edited: what they define is
-- wrapped or redefined here.
--
-- * The rating family of a game / an invitation is its time_family column
--   (0005), no longer 'untimed' for all (0006's placeholders).
-- * Invite with both a time control and `rated`: 0005's
--   store_create_invitation_tc, then 0006's pool check on the family the
--   time control gave the invitation.
-- * The clock's writes that carry events: a move with a clock, and a
--   timeout (its GAME_OVER events), written in the write's transaction
--   only when it applied, as 0004's *_ev functions do.

CREATE OR REPLACE FUNCTION ratings_family_of_game(p_game_id bigint) RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce((SELECT time_family FROM games WHERE id = p_game_id), 'untimed') $$;

CREATE OR REPLACE FUNCTION ratings_family_of_invitation(p_invitation_id bigint) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce((SELECT time_family FROM invitations WHERE id = p_invitation_id), 'untimed')
$$;

-- 0006's ratings_create_invitation, on 0005's store_create_invitation_tc:
-- the family is known (set by the inner call) before the pool check.
CREATE FUNCTION ratings_create_invitation_tc(p_inviter_id bigint, p_handles text[],
                                             p_folded text[], p_lexicon text, p_request_id text,
                                             p_tc_kind smallint, p_tc_days int, p_tc_initial int,
                                             p_tc_increment int, p_tc_overtime int,
                                             p_family text, p_ttl_ms bigint, p_rated boolean,
                                             OUT o_code text, OUT o_detail text,
                                             OUT o_invitation json)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_id bigint;
    v_family text;
BEGIN
    BEGIN
        SELECT c.o_code, c.o_detail, c.o_invitation INTO o_code, o_detail, o_invitation
            FROM store_create_invitation_tc(p_inviter_id, p_handles, p_folded, p_lexicon,
                                            p_request_id, p_tc_kind, p_tc_days, p_tc_initial,
                                            p_tc_increment, p_tc_overtime, p_family,
                                            p_ttl_ms) c;
        IF o_code = 'ok' AND p_rated THEN
            v_id := (o_invitation ->> 'invitation_id')::bigint;
            -- Made by this transaction (not a repeat's earlier invitation).
            IF EXISTS (SELECT 1 FROM invitations WHERE id = v_id AND created_at = now()
                       AND NOT rated) THEN
                v_family := ratings_family_of_invitation(v_id);
                IF NOT EXISTS (SELECT 1 FROM rating_lexicons
                               WHERE family = v_family AND lexicon = p_lexicon) THEN
                    RAISE EXCEPTION USING ERRCODE = 'SR001', MESSAGE = v_family;
                END IF;
                UPDATE invitations SET rated = true WHERE id = v_id;
                o_invitation := (o_invitation::jsonb || '{"rated": true}'::jsonb)::json;
            END IF;
        END IF;
    EXCEPTION WHEN SQLSTATE 'SR001' THEN
        o_code := 'lexicon_not_rated';
        o_detail := SQLERRM;
        o_invitation := NULL;
    END;
END
$$;

CREATE FUNCTION store_commit_move_clock_ev(p_game_id bigint, p_seq bigint, p_seat int,
                                           p_account_id bigint, p_kind smallint, p_score int,
                                           p_notation text, p_move bytea, p_to_move int,
                                           p_scores int[], p_finish boolean,
                                           p_end_reason smallint, p_final int[], p_winners int[],
                                           p_ev_accounts bigint[], p_ev_bodies text[],
                                           p_remaining bigint[], p_turn_started bigint,
                                           p_deadline bigint, p_reason smallint,
                                           p_warning bigint,
                                           OUT o_code text, OUT o_at_ms bigint, OUT o_move bytea)
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT c.o_code, c.o_at_ms, c.o_move INTO o_code, o_at_ms, o_move
        FROM store_commit_move_clock(p_game_id, p_seq, p_seat, p_account_id, p_kind, p_score,
                                     p_notation, p_move, p_to_move, p_scores, p_finish,
                                     p_end_reason, p_final, p_winners, p_remaining,
                                     p_turn_started, p_deadline, p_reason, p_warning) c;
    PERFORM store_append_events_if_ok(o_code, p_ev_accounts, p_ev_bodies);
END
$$;

-- Of several instances racing to time a game out, only the one that gets
-- 'ok' writes GAME_OVER: the events exist exactly when the timeout does.
CREATE FUNCTION store_timeout_game_ev(p_game_id bigint, p_seq bigint, p_end_reason smallint,
                                      p_final int[], p_winners int[], p_remaining bigint[],
                                      p_ev_accounts bigint[], p_ev_bodies text[],
                                      OUT o_code text, OUT o_game json)
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT t.o_code, t.o_game INTO o_code, o_game
        FROM store_timeout_game(p_game_id, p_seq, p_end_reason, p_final, p_winners,
                                p_remaining) t;
    PERFORM store_append_events_if_ok(o_code, p_ev_accounts, p_ev_bodies);
END
$$;
