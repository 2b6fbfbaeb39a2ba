-- The orders of `event_orders` not in `event_sent_orders`, one row per order: its customer and their
-- identifiers, its time (the earliest of its lines) and value (the sum of its lines' amounts). Orders
-- placed at or after $cutoff by a customer who did not refuse marketing are numbered `seq` from 0 in
-- time order (ties by order id): the order a send goes in and resumes at; the table is stored in that
-- order, so a range of numbers reads only its own rows. The others have no number and are never sent:
-- older orders are outside the platform's window; a customer whose marketing_consent is false refused
-- (`refused`; not flagged is not a refusal).
CREATE OR REPLACE TABLE event_new_orders AS
WITH fresh AS (
    SELECT
        o.order_id,
        min(o.user_id) AS user_id,
        min(o."timestamp") AS ordered_at,
        sum(o.amount) AS order_value
    FROM event_orders AS o
    LEFT JOIN event_sent_orders AS s ON s.order_id = o.order_id
    WHERE s.order_id IS NULL
    GROUP BY o.order_id
),
judged AS (
    SELECT
        f.*,
        c.email,
        c.phone,
        c.first_name,
        c.last_name,
        c.country,
        c.state,
        c.limited_data_use,
        coalesce(c.marketing_consent = FALSE, FALSE) AS refused,
        c.city,
        c.postcode,
        c.date_of_birth,
        c.gender,
        c.external_id,
        c.madid
    FROM fresh AS f
    LEFT JOIN event_customers AS c ON c.user_id = f.user_id
)
SELECT
    CASE
        WHEN j.ordered_at >= $cutoff AND NOT j.refused
            THEN row_number() OVER (
                PARTITION BY j.ordered_at >= $cutoff AND NOT j.refused ORDER BY j.ordered_at, j.order_id
            ) - 1
    END AS seq,
    j.order_id,
    j.user_id,
    j.ordered_at,
    j.order_value,
    j.email,
    j.phone,
    j.first_name,
    j.last_name,
    j.country,
    j.state,
    j.limited_data_use,
    j.refused,
    j.city,
    j.postcode,
    j.date_of_birth,
    j.gender,
    j.external_id,
    j.madid
FROM judged AS j
ORDER BY seq NULLS LAST
