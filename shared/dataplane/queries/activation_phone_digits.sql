-- The distinct shapes of the users' phone numbers (docs/platform-notes.md §3.7): the dialing plan of
-- the user's country (country_rules.plan), whether the number was written with "+", how many ASCII
-- digits it has and its first six. What the rules do to a number depends on its shape alone
-- (shared.audiences.preparation), so the Python rules decide each distinct shape once. A number
-- already hashed is left out.
SELECT DISTINCT
    rules.plan,
    starts_with(numbers.stripped, '+') AS international,
    length(numbers.digits) AS length,
    left(numbers.digits, 6) AS head
FROM (
    SELECT country, py_strip(phone) AS stripped, regexp_replace(phone, '[^0-9]', '', 'g') AS digits
    FROM users
    WHERE phone IS NOT NULL
) AS numbers
JOIN country_rules AS rules ON rules.raw IS NOT DISTINCT FROM numbers.country
WHERE NOT is_hex64(numbers.stripped)
