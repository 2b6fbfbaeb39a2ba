-- The first and last file position of batches $first to $last (to read only their users).
SELECT coalesce(min(pos), 0) AS first_pos, coalesce(max(pos), -1) AS last_pos
FROM kept
WHERE batch BETWEEN $first AND $last
