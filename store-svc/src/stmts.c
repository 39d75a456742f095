/*
 * stmts.c — every SQL statement store-svc runs, prepared on each connection
 * when it opens. Values always travel as parameters, never inside the SQL
 * text. Writes call the store_* functions of the migrations (one statement
 * per operation, expected failures reported in a `code` column), so that a
 * batch of them pipelines in one round-trip.
 */
#include "store.h"

const store_stmt store_statements[] = {
    /* ---- writes (the batcher) ---- */
    {"register",
     "SELECT o_code, o_account_id, o_expires_at_ms FROM store_register($1, $2, $3, $4, $5)", 5},
    {"open_session", "SELECT o_code, o_expires_at_ms FROM store_open_session($1, $2, $3)", 3},
    {"update_profile", "SELECT o_code, o_profile FROM store_update_profile($1, $2, $3)", 3},
    /* $6: rated (0006_ratings.sql). Invitation and game JSON go through
     * ratings_json_rated, which adds `rated`. */
    /* With the time control ($6..$10: kind, days, initial s, increment s,
     * overtime min), its rating family, the expiry TTL in ms and rated. */
    {"create_invitation_tc",
     "SELECT o_code, o_detail, o_invitation "
     "FROM watch_create_invitation_tc($1, $2::text[], $3::text[], $4, $5, $6::smallint, $7, "
     "$8, $9, $10, $11, $12, $13, $14)",
     14},
    {"cancel_invitation",
     "SELECT o_code, ratings_json_rated(o_invitation) FROM store_cancel_invitation($1, $2)", 2},
    {"respond_invitation",
     "SELECT o_code, watch_json_public(ratings_json_rated(o_invitation)) "
     "FROM store_respond_invitation($1, $2, $3)",
     3},
    {"create_game",
     "SELECT o_code, watch_json_public(ratings_json_rated(o_game)) FROM store_create_game($1, $2)",
     2},
    /* The three writes that carry events (0004_events.sql): $15/$5 the
     * recipients, $16/$6 the packed events in hex. */
    {"commit_move",
     "SELECT o_code, o_at_ms, o_move FROM store_commit_move_ev($1, $2, $3, $4, $5, $6, $7, $8, "
     "$9, $10::int[], $11, $12, $13::int[], $14::int[], $15::bigint[], $16::text[])",
     16},
    /* commit_move plus the clock after the move ($17..$21, as
     * store_op_param_clock sets them; 0007_time_events.sql). */
    {"commit_move_clock",
     "SELECT o_code, o_at_ms, o_move FROM store_commit_move_clock_ev($1, $2, $3, $4, $5, $6, $7, "
     "$8, $9, $10::int[], $11, $12, $13::int[], $14::int[], $15::bigint[], $16::text[], "
     "$17::bigint[], $18, $19, $20::smallint, $21)",
     21},
    {"start_clock",
     "SELECT o_code, o_clock FROM store_start_clock($1, $2::bigint[], $3, $4, $5::smallint, $6)",
     6},
    /* $7/$8: the GAME_OVER events, written with the timeout. */
    {"timeout_game",
     "SELECT o_code, watch_json_public(ratings_json_rated(o_game)) "
     "FROM store_timeout_game_ev($1, $2, $3::smallint, "
     "$4::int[], $5::int[], $6::bigint[], $7::bigint[], $8::text[])",
     8},
    /* The game and invitation deadlines, then the seeks' (0010_seeks.sql:
     * matches still without a game, expiries), with the seek as column 8. */
    {"claim_deadlines",
     "SELECT o_kind, o_game_id, o_seq, o_due_ms, o_end_reason, o_account_id, o_deadline_ms, "
     "ratings_json_rated(o_invitation), NULL::json FROM store_claim_deadlines($1, $2, $3) "
     "UNION ALL SELECT o_kind, o_game_id, o_seq, o_due_ms, o_end_reason, o_account_id, "
     "o_deadline_ms, ratings_json_rated(o_invitation), o_seek "
     "FROM store_seek_claim($1, $2, $3)",
     3},
    /* Seeks (0010_seeks.sql): $1 account, $2 lexicon, $3 seats, $4..$8 the
     * time control, $9 its family, $10 rated, $11/$12 rating bounds, $13 TTL
     * ms, $14 the per-account limit, $15 the match's retry delay ms. */
    {"seek_post",
     "SELECT o_code, o_detail, o_seek FROM store_seek_post($1, $2, $3, $4::smallint, $5, $6, $7, "
     "$8, $9, $10, $11, $12, $13, $14, $15)",
     15},
    {"seek_cancel", "SELECT o_code, o_seek FROM store_seek_cancel($1, $2)", 2},
    {"claim_bot_turns",
     "SELECT o_game_id, o_seq, o_due_ms, o_account_id, o_level "
     "FROM store_claim_bot_turns($1, $2, $3, $4::bigint[], $5)",
     5},
    {"finish_game",
     "SELECT o_code, o_game FROM store_finish_game_ev($1, $2, $3::int[], $4::int[], "
     "$5::bigint[], $6::text[])",
     6},
    {"append_chat",
     "SELECT o_code, o_message_id, o_handle, o_at_ms, o_body FROM store_append_chat_ev($1, $2, "
     "$3, $4, $5::bigint[], $6::text[])",
     6},
    {"append_events", "SELECT 'ok' FROM store_append_events($1::bigint[], $2::text[], $3::text[])",
     3},

    /* ---- reads (the reader pool) ---- */
    {"resolve_session",
     "SELECT a.id, a.handle, store_ms(s.expires_at) FROM sessions s "
     "JOIN accounts a ON a.id = s.account_id "
     "WHERE s.token_hash = $1 AND s.expires_at > now()",
     1},
    /* Handles: $1 as typed, $2 folded (store_account_by_handle). */
    {"login_lookup",
     "SELECT id, handle, pw_hash FROM accounts WHERE id = store_account_by_handle($1, $2)", 2},
    /* Profiles: the profile, then its ratings (a JSON array). */
    {"account_by_id", "SELECT store_profile_json(id), ratings_json(id) FROM accounts WHERE id = $1",
     1},
    {"account_by_handle",
     "SELECT store_profile_json(id), ratings_json(id) FROM accounts "
     "WHERE id = store_account_by_handle($1, $2)",
     2},
    /* Stats, then ratings and the latest 50 rating changes (JSON arrays). */
    {"get_stats",
     "SELECT a.id, coalesce(s.games_played, 0), coalesce(s.wins, 0), coalesce(s.losses, 0), "
     "coalesce(s.draws, 0), coalesce(s.total_score, 0), coalesce(s.best_game_score, 0), "
     "coalesce(s.best_move_score, 0), ratings_json(a.id), ratings_history_json(a.id, 50) "
     "FROM accounts a LEFT JOIN account_stats s ON s.account_id = a.id WHERE a.id = $1",
     1},
    /* A rating pool ($1 lexicon, $2 family), best first, after the keyset
     * ($3 rating, $4 account id; the first page: +infinity, 0), $5 rows. */
    {"leaderboard",
     "SELECT r.account_id, a.handle, r.rating, r.deviation, r.volatility, r.games, "
     "store_ms(r.updated_at) FROM ratings r JOIN accounts a ON a.id = r.account_id "
     "WHERE r.lexicon = $1 AND r.family = $2 "
     "AND (r.rating < $3::float8 OR (r.rating = $3::float8 AND r.account_id > $4::bigint)) "
     "ORDER BY r.rating DESC, r.account_id LIMIT $5",
     5},
    /* One row with a NULL invitation when the account has none; no row when
     * the account does not exist. */
    {"list_invitations",
     "SELECT a.id, watch_json_public(ratings_json_rated(store_invitation_json(x.invitation_id))) "
     "FROM accounts a "
     "LEFT JOIN LATERAL (SELECT s.invitation_id FROM invitation_seats s "
     "  JOIN invitations i ON i.id = s.invitation_id "
     "  WHERE s.account_id = a.id AND i.status = 1 "
     "  ORDER BY s.invitation_id DESC LIMIT 100) x ON true "
     "WHERE a.id = $1 ORDER BY x.invitation_id DESC",
     1},
    /* The lobby: open seeks ($1 lexicon, '' any) after seek id $2, oldest
     * first, $3 rows. */
    {"seek_list",
     "SELECT store_seek_json(s.id) FROM seeks s WHERE s.status = 1 AND s.expires_at > now() "
     "AND ($1 = '' OR s.lexicon = $1) AND s.id > $2 ORDER BY s.id LIMIT $3",
     3},
    /* ListSeeks(mine): account $1's seeks of every status, newest first,
     * before seek id $2 (0: from the newest), $3 rows. */
    {"seek_list_mine",
     "SELECT store_seek_json(s.id) FROM seeks s WHERE s.account_id = $1 "
     "AND ($2 = 0 OR s.id < $2) ORDER BY s.id DESC LIMIT $3",
     3},
    {"get_invitation",
     "SELECT watch_json_public(ratings_json_rated(store_invitation_json(id))) FROM invitations "
     "WHERE id = $1",
     1},
    /* Game (seq 0 row, as JSON with its seats) and every move, one
     * round-trip. */
    {"load_game",
     "SELECT 0::bigint AS seq, watch_json_public(ratings_json_rated(store_game_json(id)))::text, "
     "NULL::bytea, "
     "0::bigint "
     "FROM games WHERE id = $1 "
     "UNION ALL "
     "SELECT seq, NULL, move, store_ms(created_at) FROM game_moves WHERE game_id = $1 "
     "ORDER BY 1",
     1},
    /* $2: status (0 = any), ($3 µs, $4 id): the keyset after which to
     * start, $5: how many. No row: no such account. */
    {"list_games",
     "SELECT a.id, x.game_id, floor(extract(epoch FROM x.updated_at) * 1000000)::bigint, "
     "store_game_json(x.game_id) FROM accounts a "
     "LEFT JOIN LATERAL (SELECT g.id AS game_id, g.updated_at FROM game_players p "
     "  JOIN games g ON g.id = p.game_id "
     "  WHERE p.account_id = a.id AND ($2::smallint = 0 OR p.status = $2::smallint) "
     "  AND (g.updated_at, g.id) < "
     "      (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::bigint) "
     "  ORDER BY g.updated_at DESC, g.id DESC LIMIT $5) x ON true "
     "WHERE a.id = $1 ORDER BY x.updated_at DESC, x.game_id DESC",
     5},
    {"list_chat",
     "SELECT g.id, c.id, c.account_id, a.handle, c.body, store_ms(c.created_at) FROM games g "
     "LEFT JOIN LATERAL (SELECT * FROM chat_messages m WHERE m.game_id = g.id AND m.id > $2 "
     "  ORDER BY m.id LIMIT $3) c ON true "
     "LEFT JOIN accounts a ON a.id = c.account_id WHERE g.id = $1 ORDER BY c.id",
     3},
    /* The live public games (0009_spectators.sql), newest first, after the
     * keyset ($1 created_at in µs, $2 id), $3 rows. */
    {"list_public_games",
     "SELECT g.id, floor(extract(epoch FROM g.created_at) * 1000000)::bigint, "
     "watch_json_public(store_game_json(g.id)) FROM games g "
     "WHERE g.public AND g.status = 1 "
     "AND (g.created_at, g.id) < (timestamptz 'epoch' + $1::bigint * interval '1 microsecond', "
     "$2::bigint) ORDER BY g.created_at DESC, g.id DESC LIMIT $3",
     3},
    /* The event log of one account after $2, $3 rows, with the account's
     * prune horizon and the newest id the log has held (row 0 alone, with
     * NULL id/body, when there is nothing after $2). */
    {"read_events",
     "SELECT coalesce((SELECT pruned_upto FROM event_horizon WHERE account_id = $1), 0), "
     "greatest(coalesce((SELECT max(id) FROM events), 0), "
     "  (SELECT relayed_upto FROM event_relay)), e.id, e.body "
     "FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT id, body FROM events "
     "  WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3) e ON true ORDER BY e.id",
     3},

    /* ---- the event relay's own connection (relay.c) ---- */
    {"relay_position", "SELECT relayed_upto FROM event_relay", 0},
    {"relay_page", "SELECT id, account_id, body FROM events WHERE id > $1 ORDER BY id LIMIT $2", 2},
    {"relay_save", "UPDATE event_relay SET relayed_upto = greatest(relayed_upto, $1)", 1},
    {"prune_events", "SELECT o_accounts, o_high FROM store_prune_events($1, $2, $3)", 3},
    {NULL, NULL, 0},
};
