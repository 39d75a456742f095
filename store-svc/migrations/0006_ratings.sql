-- 0006_ratings.sql — rated games and Glicko-2 ratings per rating pool.
--
-- A rating pool is a (lexicon, time-control family) pair; the families are
-- 'untimed', 'correspondence' and 'realtime'.
--
--   invitations.rated     InviteRequest.rated; a game is rated when the
--                         invitation it came from is (no column on games:
--                         games.invitation_id leads to it).
--   rating_lexicons(family, lexicon)
--       which lexicons each family rates. A rated invitation in a pool
--       missing here is refused ('lexicon_not_rated'). An operator adds a
--       pool with one INSERT.
--   ratings(account_id, lexicon, family, rating, deviation, volatility,
--           games, updated_at)   PK (account_id, lexicon, family)
--       the current Glicko-2 rating (Glicko scale: 1500 / 350 / 0.06 to
--       start); a missing row is an unrated player. Index for leaderboards.
--   rating_history(account_id, game_id, lexicon, family, rating_before,
--           rating_after, deviation_before, deviation_after,
--           volatility_after, score, created_at)   PK (account_id, game_id)
--       one row per player per rated game: the primary key also makes a
--       game rate each player at most once.
--
-- When ratings change: a trigger on game_players fires when a game's rows
-- go from active (1) to finished (2) — the statement store__finish runs in
-- the transaction that commits the last move (or FinishGame) — so the
-- ratings change in the transaction that ends the game, and only when a
-- game ends. It is a trigger rather than a call inside store__finish so
-- that whatever finishes a game (a move, FinishGame, a later migration's
-- timeout) rates it, without this migration redefining their functions.
-- The trigger fires after the whole UPDATE (AFTER ROW triggers run at the
-- end of the statement), so it sees every seat's final score; games.winners
-- was set by the statement before it.
--
-- No lost update: ratings_apply_game creates any missing rows, then locks
-- every seat's rating row in account-id order before reading them (two
-- games finishing at once with a common player serialize on its row; the
-- fixed order leaves no deadlock between two such games) and writes the
-- new values in the same transaction.

ALTER TABLE invitations ADD COLUMN rated boolean NOT NULL DEFAULT false;

CREATE TABLE rating_lexicons (
    family  text NOT NULL CHECK (family IN ('untimed', 'correspondence', 'realtime')),
    lexicon text NOT NULL,
    PRIMARY KEY (family, lexicon)
);
INSERT INTO rating_lexicons (family, lexicon) VALUES
    ('untimed', 'wamerican'), ('correspondence', 'wamerican'), ('realtime', 'wamerican');

CREATE TABLE ratings (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    lexicon    text NOT NULL,
    family     text NOT NULL,
    rating     double precision NOT NULL DEFAULT 1500,
    deviation  double precision NOT NULL DEFAULT 350,
    volatility double precision NOT NULL DEFAULT 0.06,
    games      int NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, lexicon, family)
);
-- GetLeaderboard: a pool's players, best first (keyset on rating, id).
CREATE INDEX ratings_board ON ratings (lexicon, family, rating DESC, account_id);

CREATE TABLE rating_history (
    account_id       bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    game_id          bigint NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    lexicon          text NOT NULL,
    family           text NOT NULL,
    rating_before    double precision NOT NULL,
    rating_after     double precision NOT NULL,
    deviation_before double precision NOT NULL,
    deviation_after  double precision NOT NULL,
    volatility_after double precision NOT NULL,
    score            double precision NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, game_id)
);
CREATE INDEX rating_history_account ON rating_history (account_id, created_at DESC, game_id DESC);

-- The time-control family of a game and of an invitation. Every game is
-- 'untimed' until time controls exist; the migration that adds them
-- redefines these two functions (one SELECT each, e.g.
-- `SELECT time_family FROM games WHERE id = p_game_id`), and nothing else
-- here changes.
CREATE FUNCTION ratings_family_of_game(p_game_id bigint) RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT 'untimed'::text $$;
CREATE FUNCTION ratings_family_of_invitation(p_invitation_id bigint) RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT 'untimed'::text $$;

-- One Glicko-2 rating period (Glickman, "Example of the Glicko-2 system",
-- steps 1-8) for a player rated p_rating / p_rd / p_vol against opponents
-- p_opp_rating[i] / p_opp_rd[i] with scores p_scores[i] (1 win, 0.5 draw,
-- 0 loss), all on the Glicko scale. tau = 0.5, convergence 1e-6, the
-- volatility found with the Illinois algorithm of the paper's step 5.
CREATE FUNCTION ratings_glicko2(p_rating double precision, p_rd double precision,
                                p_vol double precision, p_opp_rating double precision[],
                                p_opp_rd double precision[], p_scores double precision[],
                                OUT o_rating double precision, OUT o_rd double precision,
                                OUT o_vol double precision)
    LANGUAGE plpgsql IMMUTABLE
    AS $$
DECLARE
    c_scale constant double precision := 173.7178;
    c_tau constant double precision := 0.5;
    c_eps constant double precision := 0.000001;
    v_mu double precision := (p_rating - 1500) / c_scale;
    v_phi double precision := p_rd / c_scale;
    v_g double precision;
    v_e double precision;
    v_vinv double precision := 0;
    v_sum double precision := 0;
    v_v double precision;
    v_delta double precision;
    v_a double precision;
    v_aa double precision;
    v_bb double precision;
    v_cc double precision;
    v_fa double precision;
    v_fb double precision;
    v_fc double precision;
    v_k int;
    v_sigma double precision;
    v_phistar double precision;
    v_phinew double precision;
BEGIN
    IF cardinality(p_opp_rating) IS NULL OR cardinality(p_opp_rating) = 0 THEN
        -- No game in the period: only the deviation grows (step 6 alone).
        o_rating := p_rating;
        o_rd := c_scale * sqrt(v_phi * v_phi + p_vol * p_vol);
        o_vol := p_vol;
        RETURN;
    END IF;
    FOR i IN 1 .. cardinality(p_opp_rating) LOOP
        v_g := 1 / sqrt(1 + 3 * (p_opp_rd[i] / c_scale) ^ 2 / pi() ^ 2);
        v_e := 1 / (1 + exp(-v_g * (v_mu - (p_opp_rating[i] - 1500) / c_scale)));
        v_vinv := v_vinv + v_g * v_g * v_e * (1 - v_e);
        v_sum := v_sum + v_g * (p_scores[i] - v_e);
    END LOOP;
    v_v := 1 / v_vinv;
    v_delta := v_v * v_sum;
    -- Step 5: the new volatility, the root of f.
    v_a := ln(p_vol * p_vol);
    v_aa := v_a;
    IF v_delta * v_delta > v_phi * v_phi + v_v THEN
        v_bb := ln(v_delta * v_delta - v_phi * v_phi - v_v);
    ELSE
        v_k := 1;
        WHILE ratings__glicko2_f(v_a - v_k * c_tau, v_delta, v_phi, v_v, v_a, c_tau) < 0 LOOP
            v_k := v_k + 1;
        END LOOP;
        v_bb := v_a - v_k * c_tau;
    END IF;
    v_fa := ratings__glicko2_f(v_aa, v_delta, v_phi, v_v, v_a, c_tau);
    v_fb := ratings__glicko2_f(v_bb, v_delta, v_phi, v_v, v_a, c_tau);
    WHILE abs(v_bb - v_aa) > c_eps LOOP
        v_cc := v_aa + (v_aa - v_bb) * v_fa / (v_fb - v_fa);
        v_fc := ratings__glicko2_f(v_cc, v_delta, v_phi, v_v, v_a, c_tau);
        IF v_fc * v_fb <= 0 THEN
            v_aa := v_bb;
            v_fa := v_fb;
        ELSE
            v_fa := v_fa / 2;
        END IF;
        v_bb := v_cc;
        v_fb := v_fc;
    END LOOP;
    v_sigma := exp(v_aa / 2);
    -- Steps 6-8.
    v_phistar := sqrt(v_phi * v_phi + v_sigma * v_sigma);
    v_phinew := 1 / sqrt(1 / (v_phistar * v_phistar) + 1 / v_v);
    o_rating := c_scale * (v_mu + v_phinew * v_phinew * v_sum) + 1500;
    o_rd := c_scale * v_phinew;
    o_vol := v_sigma;
END
$$;

-- f(x) of step 5.
CREATE FUNCTION ratings__glicko2_f(x double precision, p_delta double precision,
                                   p_phi double precision, p_v double precision,
                                   p_a double precision, p_tau double precision)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT exp(x) * (p_delta * p_delta - p_phi * p_phi - p_v - exp(x))
           / (2 * (p_phi * p_phi + p_v + exp(x)) ^ 2)
           - (x - p_a) / (p_tau * p_tau)
$$;

-- Rates a finished game, if it was invited as rated: each seat plays every
-- other seat once in one rating period, all from their ratings before the
-- game. Against each opponent a seat scores 1, 0.5 or 0: a resigner loses
-- to everyone; otherwise a winner (games.winners) beats a non-winner, two
-- winners draw, and two non-winners are ordered by final score (equal:
-- a draw).
CREATE FUNCTION ratings_apply_game(p_game_id bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_lexicon text;
    v_family text;
    v_rated boolean;
    v_winners int[];
    v_resigned int;
    v_accounts bigint[];
    v_seats int[];
    v_scores int[];
    v_rating double precision[];
    v_rd double precision[];
    v_vol double precision[];
    v_n int;
    v_opp_r double precision[];
    v_opp_rd double precision[];
    v_res double precision[];
    v_s double precision;
    v_new record;
BEGIN
    SELECT g.lexicon, coalesce(i.rated, false), g.winners
        INTO v_lexicon, v_rated, v_winners
        FROM games g LEFT JOIN invitations i ON i.id = g.invitation_id
        WHERE g.id = p_game_id;
    IF NOT FOUND OR NOT v_rated THEN
        RETURN;
    END IF;
    v_family := ratings_family_of_game(p_game_id);
    SELECT m.seat INTO v_resigned FROM game_moves m
        WHERE m.game_id = p_game_id AND m.kind = 4 ORDER BY m.seq DESC LIMIT 1;
    -- New players get the starting row, then every seat's row is locked in
    -- account order: the read below sees no concurrent change, and no two
    -- finishing games wait on each other in a cycle.
    INSERT INTO ratings (account_id, lexicon, family)
        SELECT p.account_id, v_lexicon, v_family FROM game_players p
        WHERE p.game_id = p_game_id ORDER BY p.account_id
        ON CONFLICT DO NOTHING;
    PERFORM 1 FROM ratings r
        WHERE r.lexicon = v_lexicon AND r.family = v_family
          AND r.account_id IN (SELECT p.account_id FROM game_players p WHERE p.game_id = p_game_id)
        ORDER BY r.account_id FOR UPDATE;
    SELECT array_agg(p.account_id ORDER BY p.seat), array_agg(p.seat ORDER BY p.seat),
           array_agg(p.score ORDER BY p.seat), array_agg(r.rating ORDER BY p.seat),
           array_agg(r.deviation ORDER BY p.seat), array_agg(r.volatility ORDER BY p.seat)
        INTO v_accounts, v_seats, v_scores, v_rating, v_rd, v_vol
        FROM game_players p
        JOIN ratings r ON r.account_id = p.account_id AND r.lexicon = v_lexicon
                      AND r.family = v_family
        WHERE p.game_id = p_game_id;
    v_n := coalesce(cardinality(v_accounts), 0);
    IF v_n < 2 THEN
        RETURN;
    END IF;
    FOR i IN 1 .. v_n LOOP
        v_opp_r := '{}';
        v_opp_rd := '{}';
        v_res := '{}';
        FOR j IN 1 .. v_n LOOP
            CONTINUE WHEN j = i;
            IF v_seats[i] = v_resigned THEN
                v_s := 0;
            ELSIF v_seats[j] = v_resigned THEN
                v_s := 1;
            ELSIF (v_seats[i] = ANY (v_winners)) AND (v_seats[j] = ANY (v_winners)) THEN
                v_s := 0.5;
            ELSIF v_seats[i] = ANY (v_winners) THEN
                v_s := 1;
            ELSIF v_seats[j] = ANY (v_winners) THEN
                v_s := 0;
            ELSE
                v_s := CASE WHEN v_scores[i] > v_scores[j] THEN 1
                            WHEN v_scores[i] < v_scores[j] THEN 0 ELSE 0.5 END;
            END IF;
            v_opp_r := v_opp_r || v_rating[j];
            v_opp_rd := v_opp_rd || v_rd[j];
            v_res := v_res || v_s;
        END LOOP;
        SELECT * INTO v_new FROM ratings_glicko2(v_rating[i], v_rd[i], v_vol[i], v_opp_r,
                                                 v_opp_rd, v_res);
        INSERT INTO rating_history (account_id, game_id, lexicon, family, rating_before,
                                    rating_after, deviation_before, deviation_after,
                                    volatility_after, score)
            VALUES (v_accounts[i], p_game_id, v_lexicon, v_family, v_rating[i], v_new.o_rating,
                    v_rd[i], v_new.o_rd, v_new.o_vol,
                    (SELECT avg(x) FROM unnest(v_res) AS x))
            ON CONFLICT DO NOTHING;
        CONTINUE WHEN NOT FOUND; -- this game already rated this player
        UPDATE ratings SET rating = v_new.o_rating, deviation = v_new.o_rd,
                           volatility = v_new.o_vol, games = games + 1, updated_at = now()
            WHERE account_id = v_accounts[i] AND lexicon = v_lexicon AND family = v_family;
    END LOOP;
END
$$;

CREATE FUNCTION ratings_on_finish() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM ratings_apply_game(NEW.game_id);
    RETURN NULL;
END
$$;

-- Once per game (seat 0's row), when its seats turn finished. The WHEN
-- clause is evaluated without calling any function, and the per-move score
-- updates do not name `status`, so moves cost nothing here.
CREATE TRIGGER game_players_rate AFTER UPDATE OF status ON game_players
    FOR EACH ROW WHEN (OLD.status = 1 AND NEW.status = 2 AND NEW.seat = 0)
    EXECUTE FUNCTION ratings_on_finish();

-- Invite with `rated`: store_create_invitation (0003), then, for a rated
-- invitation it has just created, the pool check and the flag. A pool the
-- family does not rate undoes the whole invitation (the block below is a
-- subtransaction) and answers 'lexicon_not_rated' with the family as
-- detail. A repeat of a request id returns its invitation unchanged.
CREATE FUNCTION ratings_create_invitation(p_inviter_id bigint, p_handles text[],
                                          p_folded text[], p_lexicon text, p_request_id text,
                                          p_rated boolean,
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
            FROM store_create_invitation(p_inviter_id, p_handles, p_folded, p_lexicon,
                                         p_request_id) c;
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
                -- Said here: the statement's STABLE wrapper reads the
                -- snapshot from before this UPDATE.
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

-- An invitation's or a game's JSON (0001's store_invitation_json /
-- store_game_json, both carrying `invitation_id`) plus `rated`, for the
-- statements that return them, so 0001's functions stay as they are. A
-- JSON that already says `rated` keeps it.
CREATE FUNCTION ratings_json_rated(j json) RETURNS json
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN j IS NULL OR j::jsonb ? 'rated' THEN j ELSE
        (j::jsonb || jsonb_build_object('rated',
            coalesce((SELECT i.rated FROM invitations i
                      WHERE i.id = (j ->> 'invitation_id')::bigint), false)))::json END
$$;

-- An account's ratings (best first) and its latest rating changes (newest
-- first), as JSON arrays ('[]' when none).
CREATE FUNCTION ratings_json(p_account_id bigint) RETURNS json
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(json_agg(json_build_object('lexicon', r.lexicon, 'family', r.family,
               'rating', r.rating, 'deviation', r.deviation, 'volatility', r.volatility,
               'games', r.games, 'updated_at_ms', store_ms(r.updated_at))
               ORDER BY r.rating DESC, r.lexicon, r.family), '[]'::json)
    FROM ratings r WHERE r.account_id = p_account_id
$$;

CREATE FUNCTION ratings_history_json(p_account_id bigint, p_limit int) RETURNS json
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(json_agg(json_build_object('game_id', h.game_id, 'lexicon', h.lexicon,
               'family', h.family, 'rating_before', h.rating_before,
               'rating_after', h.rating_after, 'deviation_before', h.deviation_before,
               'deviation_after', h.deviation_after, 'volatility_after', h.volatility_after,
               'score', h.score, 'at_ms', store_ms(h.created_at))
               ORDER BY h.created_at DESC, h.game_id DESC), '[]'::json)
    FROM (SELECT * FROM rating_history WHERE account_id = p_account_id
          ORDER BY created_at DESC, game_id DESC LIMIT p_limit) h
$$;
