-- The numbers whose shape their first six digits do not decide (a long run of zeros), distinct.
SELECT DISTINCT numbers.plan, numbers.international, numbers.digits
FROM (
    SELECT
        rules.plan,
        starts_with(py_strip(users.phone), '+') AS international,
        regexp_replace(users.phone, '[^0-9]', '', 'g') AS digits
    FROM users
    JOIN country_rules AS rules ON rules.raw IS NOT DISTINCT FROM users.country
    WHERE users.phone IS NOT NULL AND NOT is_hex64(py_strip(users.phone))
) AS numbers
JOIN phone_shapes AS shapes
    ON shapes.plan IS NOT DISTINCT FROM numbers.plan
    AND shapes.international = numbers.international
    AND shapes.length = length(numbers.digits)
    AND shapes.head = left(numbers.digits, 6)
WHERE NOT shapes.decided
