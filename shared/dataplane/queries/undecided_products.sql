-- The products only the record model can judge, with their cells, in file order.
SELECT r.record, r.product_id, r.name, r.category, r.price
FROM raw AS r JOIN checked AS c ON c.record = r.record
WHERE c.verdict = 'undecided'
ORDER BY r.record
