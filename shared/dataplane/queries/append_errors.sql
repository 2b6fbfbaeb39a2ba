-- The record model's problems (`model_errors`) among every rejected row's problems.
INSERT INTO errors SELECT kind, record, field, reason, CAST(NULL AS BIGINT) AS line FROM model_errors
