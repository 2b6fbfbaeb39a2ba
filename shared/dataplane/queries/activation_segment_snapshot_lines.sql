-- The snapshot's lines of a segment's users (segment_users) ranked $first to $last, best first
-- (shared.audiences.snapshot: SNAPSHOT_COLUMNS, cells made spreadsheet-safe, the score as Python's
-- repr), with the group column when a holdout split them ($with_group).
SELECT
    csv_field(csv_safe(user_id)) || ','
    || csv_field(csv_safe(email)) || ','
    || csv_field(csv_safe(first_name)) || ','
    || csv_field(csv_safe(last_name)) || ','
    || csv_field(csv_safe(phone)) || ','
    || coalesce(CAST(score AS VARCHAR), '')
    || CASE WHEN $with_group THEN CASE WHEN held THEN ',holdout' ELSE ',uploaded' END ELSE '' END AS line
FROM segment_users
WHERE rank BETWEEN $first AND $last
ORDER BY rank
