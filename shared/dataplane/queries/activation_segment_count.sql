-- How many of a segment's users have a customer row (segment_users).
SELECT count(*) AS users FROM segment_users
