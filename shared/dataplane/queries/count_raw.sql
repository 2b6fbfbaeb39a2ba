-- Records loaded into `raw`.
SELECT count(*) FROM raw
