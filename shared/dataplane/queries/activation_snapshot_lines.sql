-- The snapshot's lines (shared.audiences.snapshot: SNAPSHOT_COLUMNS, cells made spreadsheet-safe,
-- the score in Python's repr) of the users at positions $first to $last of the file, in file order,
-- for the caller to write as CRLF lines. A range at a time: users_input is in file order, so each
-- range reads only its own blocks and sorts only its own rows (one sort of a 30M-user list ran out of
-- the engine's memory).
SELECT
    csv_field(csv_safe(user_id)) || ','
    || csv_field(csv_safe(email)) || ','
    || csv_field(csv_safe(first_name)) || ','
    || csv_field(csv_safe(last_name)) || ','
    || csv_field(csv_safe(phone)) || ','
    || coalesce(CAST(CAST(score AS DOUBLE) AS VARCHAR), '') AS line
FROM users_input
WHERE pos BETWEEN $first AND $last
ORDER BY pos
