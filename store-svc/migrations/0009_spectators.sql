-- 0009_spectators.sql — public games (issue 16, spectators).
--
--   invitations.public   InviteRequest.public_game, fixed at Invite.
--   games.public         copied from the game's invitation when the game
--                        row is inserted (trigger below), so that every
--                        way of creating a game gets it without this
--                        migration redefining store_create_game; a
--                        creator that sets it itself keeps its value.
--   games_public_live    the live public games, newest first, for
--                        ListPublicGames (keyset on created_at, id).
--
-- Why the list is ordered by creation and not by activity: updated_at
-- changes on every move, and an index on it would turn every move's write
-- of the games row into a non-HOT update (0001 keeps those HOT on
-- purpose). public never changes and status changes once, so this index
-- costs one entry per public game and nothing per move; and a keyset on a
-- key that never changes pages without repeats or skips.

ALTER TABLE invitations ADD COLUMN public boolean NOT NULL DEFAULT false;
ALTER TABLE games ADD COLUMN public boolean NOT NULL DEFAULT false;

CREATE INDEX games_public_live ON games (created_at DESC, id DESC) WHERE public AND status = 1;

CREATE FUNCTION watch__game_public() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NOT NEW.public AND NEW.invitation_id IS NOT NULL THEN
        NEW.public := coalesce((SELECT public FROM invitations WHERE id = NEW.invitation_id),
                               false);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER games_public BEFORE INSERT ON games
    FOR EACH ROW EXECUTE FUNCTION watch__game_public();

-- An invitation's or a game's JSON plus `public` (as 0006's
-- ratings_json_rated adds `rated`): a game's JSON is told by its `seed`.
-- A JSON that already says `public` keeps it.
CREATE FUNCTION watch_json_public(j json) RETURNS json
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN j IS NULL OR j::jsonb ? 'public' THEN j
        WHEN j::jsonb ? 'seed' THEN
            (j::jsonb || jsonb_build_object('public',
                coalesce((SELECT g.public FROM games g
                          WHERE g.id = (j ->> 'game_id')::bigint), false)))::json
        ELSE
            (j::jsonb || jsonb_build_object('public',
                coalesce((SELECT i.public FROM invitations i
                          WHERE i.id = (j ->> 'invitation_id')::bigint), false)))::json END
$$;

-- 0007's ratings_create_invitation_tc plus public: set on the invitation
-- this transaction made (a repeat of a request_id returns the original
-- invitation as it is, public or not).
CREATE FUNCTION watch_create_invitation_tc(p_inviter_id bigint, p_handles text[],
                                           p_folded text[], p_lexicon text, p_request_id text,
                                           p_tc_kind smallint, p_tc_days int, p_tc_initial int,
                                           p_tc_increment int, p_tc_overtime int,
                                           p_family text, p_ttl_ms bigint, p_rated boolean,
                                           p_public boolean,
                                           OUT o_code text, OUT o_detail text,
                                           OUT o_invitation json)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_id bigint;
BEGIN
    SELECT c.o_code, c.o_detail, c.o_invitation INTO o_code, o_detail, o_invitation
        FROM ratings_create_invitation_tc(p_inviter_id, p_handles, p_folded, p_lexicon,
                                          p_request_id, p_tc_kind, p_tc_days, p_tc_initial,
                                          p_tc_increment, p_tc_overtime, p_family, p_ttl_ms,
                                          p_rated) c;
    IF o_code = 'ok' AND p_public THEN
        v_id := (o_invitation ->> 'invitation_id')::bigint;
        UPDATE invitations SET public = true
            WHERE id = v_id AND created_at = now() AND NOT public;
    END IF;
    o_invitation := watch_json_public(ratings_json_rated(o_invitation));
END
$$;
