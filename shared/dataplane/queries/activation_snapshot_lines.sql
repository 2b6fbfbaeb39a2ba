-- The snapshot's lines (shared.audiences.snapshot: SNAPSHOT_COLUMNS, cells made spreadsheet-safe,
-- the score in Python's repr), one per user in file order, for the caller to write as CRLF lines.
SELECT
    csv_field(csv_safe(user_id)) || ','
    || csv_field(csv_safe(email)) || ','
    || csv_field(csv_safe(first_name)) || ','
    || csv_field(csv_safe(last_name)) || ','
    || csv_field(csv_safe(phone)) || ','
    || coalesce(CAST(CAST(score AS DOUBLE) AS VARCHAR), '') AS line
FROM users_input
ORDER BY pos
