-- Handles are unique in their folded form (Unicode NFKC + case folding), so
-- "Alice", "ALICE" and "Ａｌｉｃｅ" (fullwidth) are one handle.
--
-- accounts.handle_folded is written by store-svc (libunistring; Postgres
-- cannot fold exactly as it does) at Register, and by store-svc at start
-- for rows that have none (accounts made before this migration, or seeded
-- directly into the table). A printable-ASCII handle folds to lower(handle)
-- exactly, so a trigger fills those at once: direct inserts (the load
-- driver's seeding) get their folded form without waiting for a restart.
--
-- Accounts made before this migration whose folded forms collide ("Bob"
-- and "bob") keep working: the oldest gets the folded form, the others keep
-- handle_folded NULL and are found by their exact handle, which lookups try
-- first (store_account_by_handle).

ALTER TABLE accounts ADD COLUMN handle_folded text;

CREATE FUNCTION store_handle_fold_ascii() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.handle_folded IS NULL AND NEW.handle ~ '^[!-~]+$' THEN
        NEW.handle_folded := lower(NEW.handle);
    END IF;
    RETURN NEW;
END
$$;

-- Backfill the ASCII handles now, oldest first, skipping any whose folded
-- form an older account already took (they keep NULL, see above).
UPDATE accounts a SET handle_folded = lower(a.handle)
    WHERE a.handle ~ '^[!-~]+$'
      AND a.id = (SELECT min(b.id) FROM accounts b
                  WHERE b.handle ~ '^[!-~]+$' AND lower(b.handle) = lower(a.handle));

CREATE UNIQUE INDEX accounts_handle_folded ON accounts (handle_folded);
-- The rows store-svc still has to fold at start (few, usually none).
CREATE INDEX accounts_handle_unfolded ON accounts (id) WHERE handle_folded IS NULL;

CREATE TRIGGER accounts_handle_fold_ascii BEFORE INSERT ON accounts
    FOR EACH ROW EXECUTE FUNCTION store_handle_fold_ascii();

-- The account a handle names: the exact handle first (so a pre-folding
-- account whose folded form collided is still reachable by its own
-- spelling), else the folded form. NULL when none.
CREATE FUNCTION store_account_by_handle(p_handle text, p_folded text) RETURNS bigint
    LANGUAGE sql STABLE
    AS $$
    SELECT id FROM accounts WHERE handle = p_handle OR handle_folded = p_folded
    ORDER BY (handle = p_handle) DESC, id LIMIT 1
$$;

-- Register now stores the folded form too; either unique index refusing the
-- row means the handle is taken.
DROP FUNCTION store_register(text, text, text, bigint);
CREATE FUNCTION store_register(p_handle text, p_folded text, p_pw_hash text, p_token_hash text,
                               p_ttl_ms bigint,
                               OUT o_code text, OUT o_account_id bigint,
                               OUT o_expires_at_ms bigint)
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO accounts (handle, handle_folded, pw_hash) VALUES (p_handle, p_folded, p_pw_hash)
        ON CONFLICT DO NOTHING
        RETURNING id INTO o_account_id;
    IF o_account_id IS NULL THEN
        o_code := 'handle_taken';
        RETURN;
    END IF;
    SELECT s.o_code, s.o_expires_at_ms INTO o_code, o_expires_at_ms
        FROM store_open_session(o_account_id, p_token_hash, p_ttl_ms) s;
END
$$;

-- Invitees are named by handle and folded handle (same order, seat 1..n).
DROP FUNCTION store_create_invitation(bigint, text[], text);
CREATE FUNCTION store_create_invitation(p_inviter_id bigint, p_handles text[], p_folded text[],
                                        p_lexicon text,
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
    INSERT INTO invitations (inviter_id, lexicon) VALUES (p_inviter_id, p_lexicon)
        RETURNING id INTO v_id;
    INSERT INTO invitation_seats (invitation_id, seat, account_id, answer)
        SELECT v_id, 0, p_inviter_id, 2
        UNION ALL
        SELECT v_id, u.ord::int, u.id, 1 FROM unnest(v_ids) WITH ORDINALITY AS u (id, ord);
    o_code := 'ok';
    o_invitation := store_invitation_json(v_id);
END
$$;
