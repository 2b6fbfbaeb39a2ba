-- The holdout's groups file lines (shared.activation.users_files.groups_csv: user_id, the score as
-- Python's repr, the group) of a segment's users (segment_users) ranked $first to $last, best first.
SELECT
    csv_field(user_id) || ',' || coalesce(CAST(score AS VARCHAR), '') || ','
    || CASE WHEN held THEN 'holdout' ELSE 'uploaded' END AS line
FROM segment_users
WHERE rank BETWEEN $first AND $last
ORDER BY rank
