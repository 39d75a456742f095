-- 0008_bots.sql — computer opponents (docs/API.md, "Bots").
--
--   bot_accounts(account_id, level): the accounts that are bots, one per
--       level. Their handles are "bot-<level>"; the prefix "bot-" is
--       reserved (Register refuses it: handle_reserved), so a handle
--       beginning with it names a bot or nothing. A bot's password hash is
--       "!", which no password verifies: nobody can log in as a bot.
--   invitation_seats: a bot seat is accepted as it is inserted (a trigger),
--       so a bot accepts every invitation at once; an invitation whose
--       invitees are all bots is fully accepted when it is made, and the
--       gateway starts its game in the Invite call.
--   bot_turns(game_id, seq, account_id, due_ms, claimed_until_ms): "a bot
--       is to move in this game", one row per game, written by triggers in
--       the transaction that makes it so (the game's creation, or the
--       commit of the move before), and removed in the transaction of the
--       next move or the game's end. game-svc claims due rows with
--       ClaimBotTurns (store_claim_bot_turns: SKIP LOCKED, leased), so
--       a restart or another instance still moves the bot, and two pollers
--       never take the same row. The lease only bounds how long a claim
--       that died waits; the move itself is exactly-once by CommitMove's
--       seq check.
--
-- Why a table of its own rather than a kind of game_deadlines: the claim
-- of game_deadlines deletes every kind but timeouts as it takes them, and a
-- bot turn must survive its claimer's crash (leased, like a timeout); a
-- separate table and claim leave 0005's claim untouched, and game-svc can
-- poll bot turns at their own cadence and only as fast as its pool has
-- room.

CREATE TABLE bot_accounts (
    account_id bigint PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    level      text NOT NULL UNIQUE
);

-- The levels, weakest first (game-svc/src/bot_play.h has their play). A
-- handle already taken by a person (made before this migration) leaves
-- that level without an account rather than turning the person into a bot.
WITH lv (level) AS (VALUES ('beginner'), ('club'), ('expert')),
     ins AS (
         INSERT INTO accounts (handle, handle_folded, pw_hash, display_name, bio)
             SELECT 'bot-' || level, 'bot-' || level, '!', 'Bot (' || level || ')',
                    'A computer opponent. Invite it by its handle; it accepts at once.'
             FROM lv
             ON CONFLICT DO NOTHING
             RETURNING id, handle)
INSERT INTO bot_accounts (account_id, level)
    SELECT id, substr(handle, 5) FROM ins;

CREATE FUNCTION store__bot_seat_accept() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.seat > 0 AND EXISTS (SELECT 1 FROM bot_accounts WHERE account_id = NEW.account_id) THEN
        NEW.answer := 2;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER invitation_seats_bot_accept BEFORE INSERT ON invitation_seats
    FOR EACH ROW EXECUTE FUNCTION store__bot_seat_accept();

CREATE TABLE bot_turns (
    game_id          bigint PRIMARY KEY REFERENCES games (id) ON DELETE CASCADE,
    seq              bigint NOT NULL,
    account_id       bigint NOT NULL,
    due_ms           bigint NOT NULL,
    claimed_until_ms bigint NOT NULL DEFAULT 0
);
CREATE INDEX bot_turns_due ON bot_turns (due_ms);

-- Sets game p_game_id's bot turn from its row: none unless it is active
-- and the seat to move is a bot.
CREATE FUNCTION store__bot_turn_set(p_game_id bigint, p_status smallint, p_to_move int,
                                    p_seq bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_bot bigint;
BEGIN
    DELETE FROM bot_turns WHERE game_id = p_game_id;
    IF p_status <> 1 THEN
        RETURN;
    END IF;
    SELECT p.account_id INTO v_bot FROM game_players p JOIN bot_accounts b
        ON b.account_id = p.account_id
        WHERE p.game_id = p_game_id AND p.seat = p_to_move;
    IF v_bot IS NOT NULL THEN
        INSERT INTO bot_turns (game_id, seq, account_id, due_ms)
            VALUES (p_game_id, p_seq, v_bot,
                    (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
    END IF;
END
$$;

CREATE FUNCTION store__bot_turn_games() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM store__bot_turn_set(NEW.id, NEW.status, NEW.to_move, NEW.seq);
    RETURN NULL;
END
$$;
CREATE TRIGGER games_bot_turn AFTER UPDATE OF seq, to_move, status ON games
    FOR EACH ROW
    WHEN (OLD.seq IS DISTINCT FROM NEW.seq OR OLD.to_move IS DISTINCT FROM NEW.to_move
          OR OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION store__bot_turn_games();

-- A new game's seats are inserted after its row: the seat to move is known
-- to be a bot only then.
CREATE FUNCTION store__bot_turn_seat() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    g record;
BEGIN
    SELECT id, status, to_move, seq INTO g FROM games WHERE id = NEW.game_id;
    IF FOUND AND g.to_move = NEW.seat AND g.status = 1
       AND EXISTS (SELECT 1 FROM bot_accounts WHERE account_id = NEW.account_id) THEN
        PERFORM store__bot_turn_set(g.id, g.status, g.to_move, g.seq);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER game_players_bot_turn AFTER INSERT ON game_players
    FOR EACH ROW EXECUTE FUNCTION store__bot_turn_seat();

-- The due bot turns for one game-svc poll (p_now_ms is its clock), leased
-- until p_now_ms + p_lease_ms; SKIP LOCKED keeps concurrent pollers apart.
-- The caller's own games (p_prefer) at once, any other once it has been
-- due for p_grace_ms: each game-svc instance moves the bots of the games
-- it holds, so no other instance's copy of a game goes stale behind its
-- back; the grace is for games whose instance died or fell behind.
CREATE FUNCTION store_claim_bot_turns(p_now_ms bigint, p_limit int, p_lease_ms bigint,
                                      p_prefer bigint[], p_grace_ms bigint)
    RETURNS TABLE (o_game_id bigint, o_seq bigint, o_due_ms bigint, o_account_id bigint,
                   o_level text)
    LANGUAGE plpgsql
    AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT t.game_id FROM bot_turns t
             WHERE t.due_ms <= p_now_ms AND t.claimed_until_ms <= p_now_ms
               AND (t.game_id = ANY (p_prefer) OR t.due_ms <= p_now_ms - p_grace_ms)
             ORDER BY t.due_ms LIMIT p_limit FOR UPDATE SKIP LOCKED
    LOOP
        UPDATE bot_turns t SET claimed_until_ms = p_now_ms + p_lease_ms
            WHERE t.game_id = r.game_id
            RETURNING t.game_id, t.seq, t.due_ms, t.account_id,
                      (SELECT b.level FROM bot_accounts b WHERE b.account_id = t.account_id)
            INTO o_game_id, o_seq, o_due_ms, o_account_id, o_level;
        RETURN NEXT;
    END LOOP;
END
$$;
