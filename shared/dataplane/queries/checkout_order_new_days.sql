-- The days (UTC, YYYY-MM-DD) that gained an order since the last compaction: each is written again
-- whole (`checkout_order_day`).
SELECT DISTINCT strftime(make_timestamp(paid_at_epoch * 1000000), '%Y-%m-%d') AS day
FROM checkout_order_files
WHERE NOT compacted
ORDER BY day
