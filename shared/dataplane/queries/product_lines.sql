-- The order lines by product, then time (the lift report reads one product's slice): the product's
-- position, the user's position in the sorted user ids, the time (epoch microseconds, UTC), amount.
SELECT order_product, order_user, order_time, order_amount
FROM encoded_lines
ORDER BY order_product, position
