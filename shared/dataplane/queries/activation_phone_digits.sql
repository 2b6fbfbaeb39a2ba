-- The distinct shapes of the users' phone numbers (users.phone_shape; docs/platform-notes.md §3.7)
-- with what the Python rules need to decide each: the dialing plan of the user's country
-- (country_rules.plan), whether the number was written with "+", how many ASCII digits it has and
-- its first six. What the rules do to a number depends on its shape alone
-- (shared.audiences.preparation), so each distinct shape is decided once. Numbers already hashed
-- have no shape.
SELECT shapes.shape, rules.plan, shapes.international, shapes.length, shapes.head
FROM (
    SELECT DISTINCT
        phone_shape AS shape,
        country_key,
        starts_with(phone_text, '+') AS international,
        length(phone_digits) AS length,
        left(phone_digits, 6) AS head
    FROM users
    WHERE phone_shape IS NOT NULL
) AS shapes
JOIN country_rules AS rules ON rules.key = shapes.country_key
