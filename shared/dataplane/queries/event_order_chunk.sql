-- The new orders numbered $start to $stop - 1, in that order, with their customer's identifiers (NULL
-- when the customer is not in the file, which a sync does not allow; the other match keys last) and
-- time in epoch seconds.
SELECT
    seq,
    order_id,
    user_id,
    CAST(epoch(ordered_at) AS BIGINT) AS ordered_at,
    order_value,
    email,
    phone,
    first_name,
    last_name,
    country,
    state,
    limited_data_use,
    city,
    postcode,
    date_of_birth,
    gender,
    external_id,
    madid
FROM event_new_orders
WHERE seq >= $start AND seq < $stop
ORDER BY seq
