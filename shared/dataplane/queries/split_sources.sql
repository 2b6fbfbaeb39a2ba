-- The record each of `raw`'s rows was made from, in row order, after a shape split records into
-- several rows (BigCommerce's orders: one row per order, its items in one cell).
SELECT _source_record FROM raw ORDER BY record
