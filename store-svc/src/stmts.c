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
    {"create_invitation",
     "SELECT o_code, o_detail, o_invitation "
     "FROM store_create_invitation($1, $2::text[], $3::text[], $4, $5)",
     5},
    /* The same, with the time control (kind, days, initial s, increment s,
     * overtime min), its rating family and the expiry TTL in ms. */
    {"create_invitation_tc",
     "SELECT o_code, o_detail, o_invitation "
     "FROM store_create_invitation_tc($1, $2::text[], $3::text[], $4, $5, $6::smallint, $7, $8, "
     "$9, $10, $11, $12)",
     12},
    {"cancel_invitation", "SELECT o_code, o_invitation FROM store_cancel_invitation($1, $2)", 2},
    {"respond_invitation", "SELECT o_code, o_invitation FROM store_respond_invitation($1, $2, $3)",
     3},
    {"create_game", "SELECT o_code, o_game FROM store_create_game($1, $2)", 2},
    {"commit_move",
     "SELECT o_code, o_at_ms, o_move FROM store_commit_move($1, $2, $3, $4, $5, $6, $7, $8, $9, "
     "$10::int[], $11, $12, $13::int[], $14::int[])",
     14},
    /* commit_move plus the clock after the move ($15..$19, as
     * store_op_param_clock sets them). */
    {"commit_move_clock",
     "SELECT o_code, o_at_ms, o_move FROM store_commit_move_clock($1, $2, $3, $4, $5, $6, $7, $8, "
     "$9, $10::int[], $11, $12, $13::int[], $14::int[], $15::bigint[], $16, $17, $18::smallint, "
     "$19)",
     19},
    {"start_clock",
     "SELECT o_code, o_clock FROM store_start_clock($1, $2::bigint[], $3, $4, $5::smallint, $6)",
     6},
    {"timeout_game",
     "SELECT o_code, o_game FROM store_timeout_game($1, $2, $3::smallint, $4::int[], $5::int[], "
     "$6::bigint[])",
     6},
    {"claim_deadlines",
     "SELECT o_kind, o_game_id, o_seq, o_due_ms, o_end_reason, o_account_id, o_deadline_ms, "
     "o_invitation FROM store_claim_deadlines($1, $2, $3)",
     3},
    {"finish_game", "SELECT o_code, o_game FROM store_finish_game($1, $2, $3::int[], $4::int[])",
     4},
    {"append_chat",
     "SELECT o_code, o_message_id, o_handle, o_at_ms, o_body FROM store_append_chat($1, $2, $3, "
     "$4)",
     4},

    /* ---- reads (the reader pool) ---- */
    {"resolve_session",
     "SELECT a.id, a.handle, store_ms(s.expires_at) FROM sessions s "
     "JOIN accounts a ON a.id = s.account_id "
     "WHERE s.token_hash = $1 AND s.expires_at > now()",
     1},
    /* Handles: $1 as typed, $2 folded (store_account_by_handle). */
    {"login_lookup",
     "SELECT id, handle, pw_hash FROM accounts WHERE id = store_account_by_handle($1, $2)", 2},
    {"account_by_id", "SELECT store_profile_json(id) FROM accounts WHERE id = $1", 1},
    {"account_by_handle",
     "SELECT store_profile_json(id) FROM accounts WHERE id = store_account_by_handle($1, $2)", 2},
    {"get_stats",
     "SELECT a.id, coalesce(s.games_played, 0), coalesce(s.wins, 0), coalesce(s.losses, 0), "
     "coalesce(s.draws, 0), coalesce(s.total_score, 0), coalesce(s.best_game_score, 0), "
     "coalesce(s.best_move_score, 0) "
     "FROM accounts a LEFT JOIN account_stats s ON s.account_id = a.id WHERE a.id = $1",
     1},
    /* One row with a NULL invitation when the account has none; no row when
     * the account does not exist. */
    {"list_invitations",
     "SELECT a.id, store_invitation_json(x.invitation_id) FROM accounts a "
     "LEFT JOIN LATERAL (SELECT s.invitation_id FROM invitation_seats s "
     "  JOIN invitations i ON i.id = s.invitation_id "
     "  WHERE s.account_id = a.id AND i.status = 1 "
     "  ORDER BY s.invitation_id DESC LIMIT 100) x ON true "
     "WHERE a.id = $1 ORDER BY x.invitation_id DESC",
     1},
    {"get_invitation", "SELECT store_invitation_json(id) FROM invitations WHERE id = $1", 1},
    /* Game (seq 0 row, as JSON with its seats) and every move, one
     * round-trip. */
    {"load_game",
     "SELECT 0::bigint AS seq, store_game_json(id)::text, NULL::bytea, 0::bigint "
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
    {NULL, NULL, 0},
};
