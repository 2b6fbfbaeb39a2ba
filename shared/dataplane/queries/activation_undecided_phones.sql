-- The numbers whose shape their first six digits do not decide (a long run of zeros), distinct, with
-- their plan, "+" and digits for the Python rules.
SELECT DISTINCT users.phone_shape, rules.plan, starts_with(users.phone_text, '+'), users.phone_digits
FROM users
JOIN phone_shapes AS shapes ON shapes.shape = users.phone_shape
JOIN country_rules AS rules ON rules.key = users.country_key
WHERE NOT shapes.decided
