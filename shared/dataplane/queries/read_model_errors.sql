-- The problems the record model found (a CSV the sync writes: kind, record, field, reason) into
-- `model_errors`.
CREATE OR REPLACE TABLE model_errors AS
SELECT * FROM read_csv(
    $path,
    header = true,
    auto_detect = false,
    columns = {'kind': 'VARCHAR', 'record': 'BIGINT', 'field': 'VARCHAR', 'reason': 'VARCHAR'}
)
