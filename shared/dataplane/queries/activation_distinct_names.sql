-- The distinct first and last names the bulk path cannot decide (not ASCII), for the Python normaliser.
SELECT DISTINCT name
FROM (
    SELECT first_name AS name FROM users
    UNION ALL
    SELECT last_name AS name FROM users
) AS names
WHERE name IS NOT NULL AND NOT is_ascii(name)
